import Foundation
import Testing
import TestOrigin

/// A layout file whose exact bytes the store holds too — the table above all, most of what a
/// one-file release of a large site would send — is copied on the destination's side (S3's
/// `x-amz-copy-source`, a folder's copy), never sent twice; it is served with the layout's
/// Cache-Control, not the store object's, and devices take the release as before.
@Suite(.serialized, .awaitsCleanups) struct PublishCopyTests {
    typealias Publisher = PublishTests.Publisher

    /// 600 files: a table of some 50 KiB, well over the size a copy is worth making for.
    static func build(_ publisher: Publisher, release n: Int) throws -> String {
        let folder = publisher.dir.path("large-\(n)")
        for m in 0..<600 where n == 1 { try publisher.dir.write("large-1/static/file-\(m).txt", "unchanged \(m)\n") }
        if n > 1 { try FileManager.default.copyItem(atPath: publisher.dir.path("large-1"), toPath: folder) }
        try publisher.dir.write("large-\(n)/index.html", "<h1>release \(n)</h1>")
        return folder
    }

    func releaseTwice(_ publisher: Publisher) throws {
        for n in 1...2 {
            let run = try publisher.run(["publish", try Self.build(publisher, release: n), "--to", publisher.remote, "--sign-key",
                                         publisher.dir.path("k1.key"), "--json"] + publisher.remoteFlags)
            #expect(run.status == 0, "publish \(n): \(run.stderr)")
            let summary = try run.json()
            #expect(summary["copied"] as? Int == 1, "release \(n): \(summary)")
            // The table as served at its uri, byte for byte the store's object it was copied from.
            let table = try Self.curl(publisher, "/Routes.json")
            let digest = try #require(summary["table"] as? String)
            let stored = try Self.curl(publisher, "/_cenarius/t/\(digest).json")
            #expect(table.count > 40_000 && table == stored)
            if n == 2 {
                // One changed page: the table crosses the link once (its store object), not twice, beside
                // its compressed form and patch, the head, the record, the index and the page.
                #expect((summary["uploadedBytes"] as? Int ?? .max) < table.count * 3 / 2, "\(summary)")
            }
            #expect(try publisher.sync("release \(n)")["outcome"] as? String == "committed")
            #expect(try publisher.served() == "<h1>release \(n)</h1>")
        }
        guard publisher.remote.hasPrefix("s3://") else { return }
        // A store keeps each object's headers: the copy has the layout's, not its source's.
        let headers = try Self.curl(publisher, "/Routes.json", ["-I"]).lowercased()
        #expect(headers.contains(" 200") && headers.contains("max-age=60") && !headers.contains("immutable"), "\(headers)")
    }

    /// What the remote serves at `path`, as anyone fetches it (the test CA for the TLS folder).
    static func curl(_ publisher: Publisher, _ path: String, _ extra: [String] = []) throws -> String {
        let run = try Binary.run(["-sf"] + extra + publisher.deviceFlags + [publisher.publicURL + path], executable: "/usr/bin/curl")
        #expect(run.status == 0, "GET \(path): \(run.stderr)")
        return run.stdout
    }

    @Test func aFolderServedByNginx() throws {
        let origin = try TLSOrigin()
        let publisher = try Publisher(remote: origin.folder("site"), publicURL: origin.url(.good), deviceFlags: ["--cacert", origin.caFile])
        try releaseTwice(publisher)
    }

    @Test(.enabled(if: Requirement.inCI || ObjectStore.available, "OpenStack Swift is not installed (make test-deps)"))
    func aThreeReplicaObjectStoreThroughItsS3API() async throws {
        let (_, _, publisher) = try await Publisher.onObjectStore("copy")
        try releaseTwice(publisher)
    }
}

import Foundation
@testable import Publishing
import RouteSync
import Testing

/// A release written from values alone (`ReleaseWriter`): what it signs, how its version follows
/// the previous release handed to it, and that it writes nowhere but the folder it is given.
struct ReleaseWriterTests {
    /// A build folder and a key, in a temporary folder of their own.
    struct Fixture {
        let root = NSTemporaryDirectory() + "release-writer-" + UUID().uuidString
        var build: String { root + "/build" }
        var out: String { root + "/out" }

        init() throws {
            for (uri, text) in [("index.html", "<h1>one</h1>"), ("js/app.js", "app()"), ("static/logo.txt", "logo")] {
                try Self.write(build + "/" + uri, Array(text.utf8))
            }
        }

        /// A private key's file (`SigningKeys.encoded(pair).private`), named `name`.
        func keyFile(_ name: String, _ bytes: [UInt8]) throws -> String {
            try Self.write(root + "/" + name, bytes)
            return root + "/" + name
        }

        /// A new key's file, for tests that never check its signatures.
        func key(_ name: String) throws -> String { try keyFile(name, SigningKeys.encoded(SigningKeys.generate()).private) }

        func writer(forms: ReleaseWriter.Forms? = .made) throws -> ReleaseWriter {
            var writer = ReleaseWriter(build: build, built: try RouteTableBuilder(root: build).build())
            writer.forms = forms
            return writer
        }

        /// Every file under `folder`, with its bytes.
        func contents(of folder: String) -> [String: Data] {
            var found: [String: Data] = [:]
            for case let relative as String in FileManager.default.enumerator(atPath: folder)?.allObjects ?? [] {
                let path = folder + "/" + relative
                var isFolder: ObjCBool = false
                if FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), !isFolder.boolValue { found[relative] = FileManager.default.contents(atPath: path) }
            }
            return found
        }

        static func write(_ path: String, _ bytes: [UInt8]) throws {
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try Data(bytes).write(to: URL(fileURLWithPath: path))
        }

        func remove() { try? FileManager.default.removeItem(atPath: root) }
    }

    @Test func theHeadSignsOverTheTableAndTheIndex() throws {
        let fixture = try Fixture()
        defer { fixture.remove() }
        let key = SigningKeys.generate()
        var writer = try fixture.writer()
        writer.signer = ReleaseSigner(keys: [try fixture.keyFile("release.key", SigningKeys.encoded(key).private)])
        var warnings: [String] = []
        let release = try writer.write(into: fixture.out) { warnings.append($0) }
        #expect(warnings.isEmpty)
        let index = try #require(release.head.index)
        let indexBytes = try #require(FileManager.default.contents(atPath: fixture.out + "/" + ReleaseHead.indexPath(index)))
        let signature = try TableSignature.parse(try #require(release.head.signature), source: "head")
        _ = try signature.bound(to: release.head.signedFiles(table: release.table, index: Array(indexBytes)), source: "head")
        #expect(signature.signers(among: [key.public]).count == 1)
        #expect(signature.version == release.signed?.signature.version)
        // The sidecar is over the same table, and vouches for the index devices before heads read.
        let sidecar = try TableSignature.parse(Array(try #require(FileManager.default.contents(atPath: release.sidecarPath))), source: "sidecar")
        #expect(sidecar.forms != nil)
        try sidecar.verify(table: release.table, with: key.public, source: "sidecar")
        #expect(FileManager.default.contents(atPath: release.headPath).map(Array.init) == release.head.serialized())
    }

    @Test func aSecondKeyCoSignsTheSameVersion() throws {
        let fixture = try Fixture()
        defer { fixture.remove() }
        let first = SigningKeys.generate(), second = SigningKeys.generate()
        var writer = try fixture.writer()
        writer.signer = ReleaseSigner(keys: [try fixture.keyFile("first.key", SigningKeys.encoded(first).private)])
        let one = try writer.write(into: fixture.out) { _ in }
        // The previous release as values: a run elsewhere, handed the sidecar's and head's bytes.
        writer.previous = .init(sidecar: one.signed?.signature.serialized(), head: one.head)
        writer.signer = ReleaseSigner(keys: [try fixture.keyFile("second.key", SigningKeys.encoded(second).private)])
        let two = try writer.write(into: fixture.root + "/elsewhere") { _ in }
        #expect(two.head.version == one.head.version)
        let head = try TableSignature.parse(try #require(two.head.signature), source: "head")
        #expect(head.signers(among: [first.public, second.public]).count == 2)
        #expect(two.signed?.signature.signatures.count == 2)
    }

    @Test func versionsGrowFromThePreviousHead() throws {
        let fixture = try Fixture()
        defer { fixture.remove() }
        var writer = try fixture.writer(forms: nil)
        let now = try writer.write(into: fixture.out) { _ in }
        #expect(now.head.version >= Int64(Date().timeIntervalSince1970 * 1000) - 60_000)
        // A head from a clock ahead of this one: the next version is above it all the same.
        var ahead = now.head
        ahead.version = now.head.version + 86_400_000
        writer.previous = .init(head: ahead)
        #expect(try writer.write(into: fixture.out) { _ in }.head.version == ahead.version + 1)
        // Signed, with a version asked for: the head carries the sidecar's.
        writer.signer = ReleaseSigner(keys: [try fixture.key("k")])
        writer.signer?.version = 42
        #expect(try writer.write(into: fixture.out) { _ in }.head.version == 42)
    }

    @Test func anUnsignedReleaseOverASignedOneIsRefusedUnlessOnPurpose() throws {
        let fixture = try Fixture()
        defer { fixture.remove() }
        var writer = try fixture.writer(forms: nil)
        writer.signer = ReleaseSigner(keys: [try fixture.key("k")])
        let signed = try writer.write(into: fixture.out) { _ in }
        writer.signer = nil
        writer.previous = .init(sidecar: signed.signed?.signature.serialized(), head: signed.head)
        #expect(throws: CenariusError.self) { _ = try writer.write(into: fixture.out) { _ in } }
        // The refusal names what the caller calls the release's place (publish: the channel of the remote).
        writer.name = "channel beta of s3://bucket/site/"
        #expect { _ = try writer.write(into: fixture.out) { _ in } } throws: { error in
            "\(error)".hasPrefix("channel beta of s3://bucket/site/ is signed: pass --sign-key")
        }
        // A signed release republished onto a channel never signed: unsigning it is as much on purpose.
        #expect(throws: CenariusError.self) {
            var promoted = ReleaseWriter.Previous()
            promoted.republishedSigned = true
            try ReleaseWriter.refuseUnsigning(over: promoted, signing: false, unsigned: false, name: "channel stable of /srv/www")
        }
        writer.unsigned = true
        let unsigned = try writer.write(into: fixture.out) { _ in }
        #expect(unsigned.head.signature == nil && unsigned.head.version > signed.head.version)
        #expect(!FileManager.default.fileExists(atPath: unsigned.sidecarPath), "the old signature goes too")
    }

    @Test func theIndexUnderTheTablesHashIsWrittenOnceAndSignedOver() throws {
        let fixture = try Fixture()
        defer { fixture.remove() }
        var writer = try fixture.writer()
        writer.signer = ReleaseSigner(keys: [try fixture.key("k")])
        let first = try writer.write(into: fixture.out) { _ in }
        let legacyPath = "/" + ReleaseIndex.indexPath(table: ReleaseIndex.tableDigest(first.table))
        let legacy = Array(try #require(FileManager.default.contents(atPath: fixture.out + legacyPath)))
        // The same table again with a base to patch from: its index is another, but devices before
        // heads keep reading the one the remote (handed over as a value) already holds.
        try Fixture.write(fixture.root + "/old/index.html", Array("<h1>zero</h1>".utf8))
        let old = try RouteTableBuilder(root: fixture.root + "/old").build()
        writer.bases = [FormPublisher.Release(root: fixture.root + "/old", table: old.table, tableBytes: old.table.serialized())]
        writer.previous = .init(legacyIndex: legacy)
        let second = try writer.write(into: fixture.root + "/second") { _ in }
        #expect(FileManager.default.contents(atPath: fixture.root + "/second" + legacyPath).map(Array.init) == legacy)
        #expect(second.signed?.signature.forms?.index == TableSignature.digest(legacy))
        #expect(second.head.index != first.head.index, "the head names the new index")
    }

    @Test func nothingIsWrittenOutsideTheFolderGiven() throws {
        let fixture = try Fixture()
        defer { fixture.remove() }
        let build = fixture.contents(of: fixture.build)
        var writer = try fixture.writer()
        writer.previous = .init(manifest: Array("{\"release\": \"kept\"}\n".utf8))
        writer.signer = ReleaseSigner(keys: [try fixture.key("k")])
        let release = try writer.write(into: fixture.out) { _ in }
        #expect(fixture.contents(of: fixture.build) == build, "the build folder is only read")
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: fixture.root)) == ["build", "out", "k"])
        let written = fixture.contents(of: fixture.out)
        for name in ["Routes.json", "Routes.json.release", "Routes.json.sig", "Routes.head"] { #expect(written[name] != nil, "\(name)") }
        #expect(release.manifestKept && release.manifest == Array("{\"release\": \"kept\"}\n".utf8))
        #expect(written.keys.allSatisfy { !$0.hasPrefix("build") })
    }

    /// A republish hands the writer the forms it read from the store as values: they are taken as
    /// they are (not compressed again) when they decode to their file, and nothing is planted in
    /// the folder written into beforehand; a held form that does not decode to its file is made anew.
    @Test func formsReadFromTheStoreAreTakenAsValues() throws {
        let fixture = try Fixture()
        defer { fixture.remove() }
        var writer = try fixture.writer()
        let text = Array((0..<2_000).map { "let v\($0 * 7919 % 1_000) = f\($0 % 97)(\($0 * 31 % 211));" }.joined(separator: " ").utf8)
        try Fixture.write(fixture.build + "/js/app.js", text)
        try Fixture.write(fixture.build + "/js/bad.js", text + Array("bad()".utf8))
        writer.built = try RouteTableBuilder(root: fixture.build).build()
        let app = try #require(writer.built.table.entries.first { $0.uri.value == "js/app.js" })
        let bad = try #require(writer.built.table.entries.first { $0.uri.value == "js/bad.js" })
        // Another valid encoding than the writer's own (level 1): taken, so its bytes come out as they went in.
        let held = try Zstd.compress(text, level: 1)
        #expect(held != (try Zstd.compress(text)))
        writer.heldForms = [ReleaseIndex.formPath(app.hash): held, ReleaseIndex.formPath(bad.hash): held]
        #expect(!FileManager.default.fileExists(atPath: fixture.out))
        let written = try writer.write(into: fixture.out) { _ in }
        #expect(written.forms?.reusedForms == 1)
        #expect(FileManager.default.contents(atPath: fixture.out + "/" + ReleaseIndex.formPath(app.hash)) == Data(held))
        let remade = try #require(FileManager.default.contents(atPath: fixture.out + "/" + ReleaseIndex.formPath(bad.hash)))
        #expect(try Zstd.decompress(Array(remade), limit: 1 << 20) == text + Array("bad()".utf8))
    }
}

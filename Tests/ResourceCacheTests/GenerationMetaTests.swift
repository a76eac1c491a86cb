import Foundation
import Testing
@testable import ResourceCache
import RouteSync
import Transport

/// `meta.json` has one codec: written and read by hand. These bytes are what every cache holds;
/// a change to them is a change of the cache's format and must show here.
@Suite struct GenerationMetaTests {
    static let meta = GenerationMeta(
        number: 3, remote: "https://cdn.example/app/Routes.json", validators: Validators(etag: "\"abc\"", lastModified: "Wed, 25 Nov 2026 20:00:00 GMT"),
        committedAt: 1795640615.25, cachedFiles: 12, cachedBytes: 34567, signedVersion: 1795640615123, entries: 40, release: "2026.11-a",
        signedAt: 1795640615, signatureExpires: 1796245415, tableSHA256: "2eb8d391bb9d8b2658ba3ee1672f8f753b4a803d0e52e87d76b5ef6b56e015c3")

    static let golden = """
        {
          "cachedBytes": 34567,
          "cachedFiles": 12,
          "committedAt": 1795640615.25,
          "entries": 40,
          "number": 3,
          "release": "2026.11-a",
          "remote": "https://cdn.example/app/Routes.json",
          "signatureExpires": 1796245415,
          "signedAt": 1795640615,
          "signedVersion": 1795640615123,
          "tableSHA256": "2eb8d391bb9d8b2658ba3ee1672f8f753b4a803d0e52e87d76b5ef6b56e015c3",
          "validators": {"etag": "\\"abc\\"", "lastModified": "Wed, 25 Nov 2026 20:00:00 GMT"}
        }

        """

    /// What caches written before (Foundation's JSON encoder, pretty-printed) hold.
    static let written = """
        {
          "cachedBytes" : 34567,
          "cachedFiles" : 12,
          "committedAt" : 1795640615.25,
          "entries" : 40,
          "number" : 3,
          "release" : "2026.11-a",
          "remote" : "https:\\/\\/cdn.example\\/app\\/Routes.json",
          "signatureExpires" : 1796245415,
          "signedAt" : 1795640615,
          "signedVersion" : 1795640615123,
          "validators" : {
            "etag" : "\\"abc\\"",
            "lastModified" : "Wed, 25 Nov 2026 20:00:00 GMT"
          }
        }
        """

    func read(_ text: String) throws -> GenerationMeta {
        let folder = NSTemporaryDirectory() + "cenarius-meta-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try text.write(toFile: folder + "/meta.json", atomically: true, encoding: .utf8)
        return try Generation(number: 3, path: folder).meta()
    }

    @Test func theRecordIsWrittenAsTheGoldenBytesAndReadBack() throws {
        #expect(String(decoding: Self.meta.encoded(), as: UTF8.self) == Self.golden)
        #expect(try read(Self.golden) == Self.meta)
    }

    @Test func recordsWrittenBeforeReadTheSame() throws {
        var before = Self.meta
        before.tableSHA256 = nil
        #expect(try read(Self.written) == before)
        var bare = Self.meta
        (bare.signedVersion, bare.entries, bare.release, bare.signedAt, bare.signatureExpires, bare.tableSHA256) = (nil, nil, nil, nil, nil, nil)
        bare.validators = Validators()
        #expect(try read(String(decoding: bare.encoded(), as: UTF8.self)) == bare)
    }

    /// A digest that is not 64 lower-case hex digits is no digest: the table is hashed instead.
    @Test func aMalformedTableDigestIsNone() throws {
        for bad in ["XYZ", String(repeating: "A", count: 64), String(repeating: "a", count: 63)] {
            let text = Self.golden.replacingOccurrences(of: Self.meta.tableSHA256!, with: bad)
            #expect(try read(text).tableSHA256 == nil, "\(bad)")
        }
    }
}

import Foundation
@testable import Publishing
import RouteSync
import Testing

/// What a publish reads of a remote before it stages (`RemoteState.read`): the listing, then what it
/// names in one round, each object held to its own limit.
struct RemoteStateTests {
    func remote(sidecar: Int) throws -> FolderDestination {
        let root = NSTemporaryDirectory() + "remote-state-" + UUID().uuidString
        let files: [String: [UInt8]] = [
            "Routes.head": Array("not a head".utf8),
            "Routes.json": Array("[]".utf8),
            "Routes.json.release": Array("manifest".utf8),
            "Routes.json.sig": [UInt8](repeating: 65, count: sidecar),
            ReleaseRecord.key(channel: "default", version: 1): Array("not a record".utf8),
        ]
        for (key, bytes) in files {
            try FileManager.default.createDirectory(atPath: (root + "/" + key as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try Data(bytes).write(to: URL(fileURLWithPath: root + "/" + key))
        }
        return FolderDestination(root: root)
    }

    @Test func whatTheListingNamesIsReadAndEachObjectHeldToItsLimit() throws {
        let small = try remote(sidecar: 100)
        defer { try? FileManager.default.removeItem(atPath: small.root) }
        let state = try RemoteState.read(small, channel: "default", routesName: "Routes.json", records: 4)
        #expect(state.headBytes == Array("not a head".utf8) && state.head == nil, "a head that does not parse is kept as bytes")
        #expect(state.tableBytes == Array("[]".utf8))
        #expect(state.manifest == Array("manifest".utf8) && state.sidecar?.count == 100)
        #expect(state.records.isEmpty, "a record that does not read is left out")
        let large = try remote(sidecar: 70_000)
        defer { try? FileManager.default.removeItem(atPath: large.root) }
        #expect(throws: CenariusError.self, "a signature over 64 KiB") {
            _ = try RemoteState.read(large, channel: "default", routesName: "Routes.json")
        }
    }
}

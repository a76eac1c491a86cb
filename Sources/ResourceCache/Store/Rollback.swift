import Crypto
import RouteSync

/// `cenariusd rollback`: makes the previous generation current again, atomically, for an
/// operator who shipped a bad build. The table rolled back from is remembered, and syncs do not
/// apply it again until the remote publishes a different one.
public enum Rollback {
    public struct Result: Sendable, Codable {
        public var from: Int
        public var to: Int
    }

    public static func run(_ settings: SyncSettings) throws(CenariusError) -> Result {
        let layout = settings.cache
        guard FileSystem.isDirectory(layout.root) else { throw .notFound("nothing to roll back: no cache at \(layout.root)") }
        let lock = try WriterLock(path: layout.lock, timeout: settings.lockTimeout, purpose: "roll back")
        defer { withExtendedLifetime(lock) {} }
        let store = GenerationStore(layout: layout)
        guard let current = store.current() else { throw .notFound("nothing to roll back: no generation is current in \(layout.root)") }
        guard let previous = store.all().first(where: { $0.number < current.number }) else {
            throw .notFound("no generation older than \(current.number) is kept in \(layout.root)")
        }
        _ = try previous.table()
        let bytes = try FileSystem.readFile(current.tablePath)
        try FileSystem.writeAtomically(Array(fingerprint(bytes).utf8), to: layout.heldBack)
        try store.activate(previous)
        return Result(from: current.number, to: previous.number)
    }

    static func fingerprint(_ table: [UInt8]) -> String {
        SHA256.hash(data: table).map { byte in
            let digits = Array("0123456789abcdef")
            return String([digits[Int(byte >> 4)], digits[Int(byte & 15)]])
        }.joined()
    }
}

import FoundationEssentials
import RouteSync
#if canImport(Glibc)
import Glibc
#endif

/// The cache's small JSON records (release state, holds, pending release): read leniently (a
/// missing or damaged file reads as nil), written whole by rename (ReleaseStore changes the release state under its lock).
enum JSONFile {
    static func read<T: Decodable>(_ type: T.Type, _ path: String) -> T? {
        guard let bytes = try? FileSystem.readFile(path, limit: 1 << 20) else { return nil }
        return try? JSONDecoder().decode(T.self, from: Data(bytes))
    }

    /// `durable`: fsync the file and its folder, for state that must survive a power loss.
    static func write(_ value: some Encodable, to path: String, durable: Bool) throws(CenariusError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        guard let data = try? encoder.encode(value) else { throw .internal("cannot encode \(path)") }
        try FileSystem.writeAtomically(Array(data), to: path, durable: durable)
        guard durable else { return }
        let fd = open(FileSystem.parentDirectory(of: path), O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if fd >= 0 {
            _ = fsync(fd)
            close(fd)
        }
    }
}

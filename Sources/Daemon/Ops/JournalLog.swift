#if canImport(Glibc)
import Glibc
#endif
import Logging
import RouteSync

/// Logs the journal understands (docs/service.md): under systemd, when stderr is the journal's
/// stream (`JOURNAL_STREAM` names its device and inode), each line starts with its syslog
/// priority (`<3>` … `<7>`), so that `journalctl -p warning` filters them; elsewhere lines stay
/// as they are.
enum JournalLog {
    /// stderr is the stream `JOURNAL_STREAM` names.
    static let active: Bool = {
        guard let raw = getenv("JOURNAL_STREAM") else { return false }
        let parts = String(cString: raw).split(separator: ":")
        var info = stat()
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]), fstat(2, &info) == 0 else { return false }
        return UInt64(info.st_dev) == device && UInt64(info.st_ino) == inode
    }()

    /// sd-daemon(3)'s prefix for a level.
    static func prefix(_ level: Logger.Level) -> String {
        switch level {
        case .trace, .debug: "<7>"
        case .info: "<6>"
        case .notice: "<5>"
        case .warning: "<4>"
        case .error: "<3>"
        case .critical: "<2>"
        }
    }

    /// The text format under the journal: swift-log's own lines, each with its priority in front.
    static func textHandler(label: String) -> any LogHandler {
        active ? PrefixedTextLogHandler(label: label) : StreamLogHandler.standardError(label: label)
    }
}

/// swift-log's `StreamLogHandler` line, written to stderr behind the event's priority.
struct PrefixedTextLogHandler: MetadataKeeping {
    let label: String
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]

    func log(event: LogEvent) {
        var inner = StreamLogHandler(label: label, stream: PrefixedStandardError(prefix: JournalLog.prefix(event.level)))
        inner.logLevel = logLevel
        inner.metadata = metadata
        inner.log(event: event)
    }
}

/// stderr, each write behind a prefix (a handler writes a line in one go).
struct PrefixedStandardError: TextOutputStream, Sendable {
    let prefix: String

    mutating func write(_ text: String) {
        let line = Array((prefix + text).utf8)
        _ = line.withUnsafeBytes { FileSystem.writeAll(2, $0) }
    }
}

/// A handler that keeps its metadata in `metadata`: the subscript swift-log asks for, once.
protocol MetadataKeeping: LogHandler {}

extension MetadataKeeping {
    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }
}

import FoundationEssentials
import Logging
import RouteSync

/// `--log-format json`: one JSON object per line on stderr, for journald and log shippers.
struct JSONLogHandler: MetadataKeeping {
    let label: String
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]

    func log(event: LogEvent) {
        var object: [String: String] = [
            "ts": Date().formatted(.iso8601),
            "level": event.level.rawValue,
            "logger": label,
            "msg": "\(event.message)",
        ]
        for (key, value) in metadata.merging(event.metadata ?? [:], uniquingKeysWith: { $1 }) { object[key] = "\(value)" }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard var data = try? encoder.encode(object) else { return }
        data.append(0x0A)
        if JournalLog.active { data.insert(contentsOf: Array(JournalLog.prefix(event.level).utf8), at: 0) }
        _ = data.withUnsafeBytes { FileSystem.writeAll(2, $0) }
    }
}

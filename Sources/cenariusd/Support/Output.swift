import FoundationEssentials
import RouteSync
import Transport

#if canImport(Glibc)
import Glibc
#endif

/// Where text goes: results on stdout, diagnostics on stderr, JSON as one object.
enum Output {
    // Every printer passes text through the one redaction (G11): no URL credentials or
    // --header values on stdout or stderr, whatever the text was built from.
    static func line(_ text: String) {
        print(Secrets.redact(text))
    }

    static func warn(_ text: String) {
        write(STDERR_FILENO, "cenariusd: warning: \(Secrets.redact(text))\n")
    }

    static func error(_ error: CenariusError) {
        write(STDERR_FILENO, "cenariusd: error: \(error.message)\n")
    }

    static func json(_ value: some Encodable) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = (try? encoder.encode(value)) ?? Data("{}".utf8)
        write(STDOUT_FILENO, Secrets.redact(String(decoding: data, as: UTF8.self)) + "\n")
    }

    /// Unbuffered, as stderr is: a progress line must show before the work it reports on ends.
    static func write(_ fd: Int32, _ text: String) {
        var text = text
        _ = text.withUTF8 { FileSystem.writeAll(fd, UnsafeRawBufferPointer($0)) }
    }

    /// "0.12 s", without locale-aware formatting (slow to warm up in a short process).
    static func seconds(_ value: Double) -> String {
        let hundredths = Whole.clamped(value * 100)
        let fraction = hundredths % 100
        return "\(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction) s"
    }

    /// Unix seconds as UTC `2026-11-24 09:30:00`, without a date formatter.
    static func timestamp(_ seconds: Double) -> String { UTCTime.text(seconds) }

    static var stderrIsTerminal: Bool { isatty(STDERR_FILENO) == 1 }

    static func bytes(_ count: Int64) -> String { ByteText.text(count) }
}

/// A one-line progress bar on stderr (files, bytes, rate); only on a terminal and never with --json.
final class ProgressBar {
    private let label: String
    private let started = FileSystem.monotonic()
    private var drawn = false

    /// nil when progress must not be shown.
    static func make(_ label: String, json: Bool) -> ProgressBar? {
        json || !Output.stderrIsTerminal ? nil : ProgressBar(label: label)
    }

    private init(label: String) {
        self.label = label
    }

    func update(_ progress: TransferProgress) {
        let elapsed = max(FileSystem.monotonic() - started, 0.001)
        let fraction = progress.filesTotal == 0 ? 1 : Double(progress.filesDone) / Double(progress.filesTotal)
        let width = 24
        let filled = Whole.clamped((fraction * Double(width)).rounded(.down), to: 0...width)
        let bar = String(repeating: "=", count: filled) + (filled < width ? ">" : "") + String(repeating: " ", count: max(0, width - filled - 1))
        let rate = Output.bytes(Int64(Whole.clamped(Double(progress.bytes) / elapsed, to: 0...Int.max)))
        let text = "\r\(label) [\(bar)] \(progress.filesDone)/\(progress.filesTotal) files  \(Output.bytes(progress.bytes))  \(rate)/s "
        Output.write(STDERR_FILENO, text)
        drawn = true
    }

    func finish() {
        if drawn { Output.write(STDERR_FILENO, "\r\u{1B}[K") }
    }
}

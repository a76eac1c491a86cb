import Synchronization

/// The one printer of secrets (G11): every error message, status field, receipt, event, metric
/// label and log line passes through `Secrets.redact`, so credentials never reach an output.
///
/// Credentials in a URL are found by their shape: `scheme://user:password@host` is shown as
/// `scheme://user:***@host` and `scheme://token@host` as `scheme://***@host`. The values of
/// `--header` have no shape, so the settings register them as they read them, and every
/// occurrence is shown as `***`.
package enum Secrets {
    private static let known = Mutex<[String]>([])

    /// Shows `value` as `***` wherever it appears from now on. Values under 4 bytes are too short
    /// to be a secret worth the damage of hiding every occurrence of them.
    package static func register(_ value: some StringProtocol) {
        let value = String(value)
        guard value.utf8.count >= 4 else { return }
        known.withLock { list in
            if !list.contains(value) { list.append(value) }
        }
    }

    /// `text` with every URL's credentials and every registered value replaced by `***`.
    package static func redact(_ text: String) -> String {
        var out = text.utf8.contains(UInt8(ascii: "@")) ? redactUserinfo(text) : text
        for value in known.withLock({ $0 }) where out.contains(value) {
            out = out.replacing(value, with: "***")
        }
        return out
    }

    private static func redactUserinfo(_ text: String) -> String {
        var bytes = Array(text.utf8)
        var index = 0
        var changed = false
        while index + 3 <= bytes.count {
            guard bytes[index] == UInt8(ascii: ":"), bytes[index + 1] == UInt8(ascii: "/"), bytes[index + 2] == UInt8(ascii: "/") else {
                index += 1
                continue
            }
            let start = index + 3
            // The authority ends at the path, query or fragment, or where the text stops being a URL.
            var end = start
            while end < bytes.count, !Self.endsAuthority(bytes[end]) { end += 1 }
            guard let at = bytes[start..<end].lastIndex(of: UInt8(ascii: "@")) else {
                index = end
                continue
            }
            let colon = bytes[start..<at].firstIndex(of: UInt8(ascii: ":"))
            let from = colon.map { $0 + 1 } ?? start
            if bytes[from..<at].elementsEqual("***".utf8) {
                index = end
                continue
            }
            bytes.replaceSubrange(from..<at, with: Array("***".utf8))
            changed = true
            index = from + 3
        }
        return changed ? String(decoding: bytes, as: UTF8.self) : text
    }

    private static func endsAuthority(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "/"), UInt8(ascii: "?"), UInt8(ascii: "#"), UInt8(ascii: " "), UInt8(ascii: "\""), UInt8(ascii: "'"),
             UInt8(ascii: "\n"), UInt8(ascii: "\t"), UInt8(ascii: ")"), UInt8(ascii: ">"), UInt8(ascii: "<"), UInt8(ascii: ","):
            true
        default:
            false
        }
    }
}

/// The durations publishers type (`--expires`, `--since`, `--min-age`).
package enum DurationText {
    /// `90s`, `30m`, `12h`, `7d`, `2w` (or plain seconds) as seconds; nil when it is not one.
    package static func seconds(_ text: String) -> Int64? {
        let units: [Character: Int64] = ["s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604_800]
        var digits = Substring(text)
        var unit: Int64 = 1
        if let last = text.last, let scale = units[last] {
            unit = scale
            digits = digits.dropLast()
        }
        guard !digits.isEmpty, digits.allSatisfy(\.isASCII), let value = Int64(digits), value > 0 else { return nil }
        let (product, overflow) = value.multipliedReportingOverflow(by: unit)
        return overflow || product > 100 * 365 * 86400 ? nil : product
    }
}

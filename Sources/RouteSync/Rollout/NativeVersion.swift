/// A host version (`--native-version`, a manifest's `requires.native`): dot-separated whole
/// numbers compared segment by segment as numbers, so `2.10.0` is newer than `2.9.1` (Cenarius'
/// own 2.x gate compared them as text). Missing segments count as 0 (`2.3` == `2.3.0`).
/// Anything else, pre-release text included (`2.3.0-beta`), is refused with a clear error rather
/// than guessed at.
package struct NativeVersion: Sendable, Comparable, CustomStringConvertible {
    package let segments: [UInt64]
    package let description: String

    package init(_ text: String) throws(CenariusError) {
        let trimmed = String(text.drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
        var segments: [UInt64] = []
        for part in trimmed.split(separator: ".", omittingEmptySubsequences: false) {
            guard !part.isEmpty, part.utf8.count <= 18, part.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
                  let value = UInt64(part) else {
                throw .usage("version \(JSONText.quoted(text)) is not dot-separated whole numbers (like 2.10.0); pre-release and build text is not compared")
            }
            segments.append(value)
        }
        guard !segments.isEmpty, segments.count <= 8 else { throw .usage("version \(JSONText.quoted(text)) has no segments or too many") }
        self.segments = segments
        description = trimmed
    }

    package static func < (a: NativeVersion, b: NativeVersion) -> Bool {
        for index in 0..<max(a.segments.count, b.segments.count) {
            let x = index < a.segments.count ? a.segments[index] : 0
            let y = index < b.segments.count ? b.segments[index] : 0
            if x != y { return x < y }
        }
        return false
    }

    package static func == (a: NativeVersion, b: NativeVersion) -> Bool { !(a < b) && !(b < a) }
}

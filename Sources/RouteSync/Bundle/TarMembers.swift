/// A bundle file read in place (docs/bundles.md): each member's byte range in the tar, so that the
/// sync asks for `_cenarius/pack/X.pack` as it asks any `file://` remote, and the request reads
/// that member's bytes where they lie instead of a copy unpacked first. A member's URL is the tar's
/// own `file://` URL with a fragment naming the range (`#member=OFFSET+SIZE`): libcurl never sends
/// or opens a fragment, the downloader turns it into the request's byte range (Downloader.start).
package struct TarMembers: Sendable, Equatable {
    package struct Range: Sendable, Equatable {
        package let offset: Int64
        package let size: Int64

        package init(offset: Int64, size: Int64) {
            self.offset = offset
            self.size = size
        }
    }

    /// The tar's `file://` URL.
    package let file: String
    /// By member name (the remote-relative path, as the bundle's layout names it).
    package let ranges: [String: Range]

    package init(file: String, ranges: [String: Range]) {
        self.file = file
        self.ranges = ranges
    }

    static let marker = "#member="

    /// The URL of the member `relative`; nil when the tar holds no such member.
    package func url(_ relative: String) -> String? {
        ranges[relative].map { file + Self.marker + String($0.offset) + "+" + String($0.size) }
    }

    /// The member range a `file://` URL names, if any.
    package static func range(of url: String) -> Range? {
        guard url.hasPrefix("file:"), let hash = url.utf8.lastIndex(of: UInt8(ascii: "#")) else { return nil }
        let fragment = Substring(url)[hash...]
        guard fragment.hasPrefix(marker) else { return nil }
        let numbers = fragment.dropFirst(marker.count).split(separator: "+", omittingEmptySubsequences: false)
        guard numbers.count == 2, let offset = Int64(numbers[0]), let size = Int64(numbers[1]), offset >= 0, size >= 0 else { return nil }
        return Range(offset: offset, size: size)
    }
}

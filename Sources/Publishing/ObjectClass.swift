import RouteSync

/// The two kinds of name a remote has, and what a CDN may do with each (docs/publish.md):
/// a store object's bytes never change, so it is cached for a year; a pointer's change with a
/// release, so it is cached briefly and revalidated.
package enum ObjectClass: Sendable, Equatable {
    case store
    case pointer

    /// Everything in a folder under `_cenarius/` is written once: named by its content, or (the
    /// index under its table's hash, for devices that predate heads) never rewritten. A name
    /// directly in `_cenarius/` is an earlier version's compressed table, which changed.
    package init(key: String) {
        let folder = ReleaseIndex.folder + "/"
        if key.hasPrefix(folder), key.utf8.dropFirst(folder.utf8.count).contains(UInt8(ascii: "/")) {
            self = .store
        } else {
            self = .pointer
        }
    }

    package func cacheControl(pointerMaxAge: Int) -> String {
        switch self {
        case .store: "public, max-age=31536000, immutable"
        case .pointer: "public, max-age=\(pointerMaxAge), must-revalidate"
        }
    }
}

/// The media type a browser needs for a file, from its name (what nginx's mime.types says for
/// the types a web front-end ships).
package enum ContentType {
    private static let types: [String: String] = [
        "html": "text/html; charset=utf-8", "htm": "text/html; charset=utf-8",
        "js": "text/javascript; charset=utf-8", "mjs": "text/javascript; charset=utf-8",
        "css": "text/css; charset=utf-8", "json": "application/json", "map": "application/json",
        "webmanifest": "application/manifest+json", "txt": "text/plain; charset=utf-8",
        "xml": "application/xml", "svg": "image/svg+xml", "png": "image/png", "jpg": "image/jpeg",
        "jpeg": "image/jpeg", "gif": "image/gif", "webp": "image/webp", "avif": "image/avif",
        "ico": "image/x-icon", "bmp": "image/bmp", "woff": "font/woff", "woff2": "font/woff2",
        "ttf": "font/ttf", "otf": "font/otf", "eot": "application/vnd.ms-fontobject",
        "wasm": "application/wasm", "pdf": "application/pdf", "mp4": "video/mp4", "webm": "video/webm",
        "mp3": "audio/mpeg", "ogg": "audio/ogg", "wav": "audio/wav", "zst": "application/zstd",
        "head": "application/json", "sig": "application/json", "release": "application/json",
        "csv": "text/csv; charset=utf-8", "md": "text/markdown; charset=utf-8",
    ]

    package static func of(_ key: String) -> String {
        let name = key.split(separator: "/").last ?? Substring(key)
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return "application/octet-stream" }
        return types[name[name.index(after: dot)...].lowercased()] ?? "application/octet-stream"
    }
}

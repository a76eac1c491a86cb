/// Which file of an older release a new file is patched against: the one at the same uri, else
/// the one whose name is the same once content hashes are taken out of it
/// (`assets/main.1a2b3c4d.js` ~ `assets/main.9f8e7d6c.js`, `index-BrX8s9aK.js` ~ `index-Cq1dE0fZ.js`),
/// the closest in size when several are.
package struct BaseMatch: Sendable {
    package struct Candidate: Sendable, Equatable {
        package var uri: URIPath
        package var hash: ContentHash
        package var size: Int64
    }

    private var byURI: [URIPath: Candidate] = [:]
    private var byStem: [String: [Candidate]] = [:]

    package init(_ table: RouteTable) {
        for entry in table.entries {
            let candidate = Candidate(uri: entry.uri, hash: entry.hash, size: entry.size ?? 0)
            byURI[entry.uri] = candidate
            byStem[Self.stem(entry.uri.value), default: []].append(candidate)
        }
    }

    package func base(for uri: URIPath, size: Int64) -> Candidate? {
        if let same = byURI[uri] { return same }
        return byStem[Self.stem(uri.value)]?.min { abs($0.size - size) < abs($1.size - size) }
    }

    /// The uri with the parts of its file name that look like content hashes left out.
    package static func stem(_ uri: String) -> String {
        let slash = uri.lastIndex(of: "/").map { uri.index(after: $0) } ?? uri.startIndex
        let folder = uri[..<slash]
        var parts: [Substring] = []
        var separators: [Character] = []
        // Vite's and Rollup's hashes are whole dot-separated parts of base64url, which may hold `-`
        // and `_` themselves (`Check.esm.C0_5iXfI.js`): those go before the name is cut further.
        let dotted = uri[slash...].split(separator: ".", omittingEmptySubsequences: false)
        let name = dotted.count > 2
            ? ([dotted[0]] + dotted.dropFirst().dropLast().filter { !Self.isDottedHash($0) } + [dotted[dotted.count - 1]]).joined(separator: ".")
            : String(uri[slash...])
        var current = Substring(name)
        while let cut = current.firstIndex(where: { $0 == "." || $0 == "-" || $0 == "_" || $0 == "~" }) {
            parts.append(current[..<cut])
            separators.append(current[cut])
            current = current[current.index(after: cut)...]
        }
        parts.append(current)
        var out = String(folder)
        for (i, part) in parts.enumerated() {
            // The first part names the file and the last is its extension; a hash is between.
            if i > 0 && i < parts.count - 1 && looksLikeHash(part) { continue }
            if i > 0 { out.append(separators[i - 1]) }
            out += part
        }
        return out
    }

    /// A whole dot-separated part that is a bundler's content hash: 8 characters of base64url with a
    /// digit or both cases in them (`DzL0gylu`, `t53AETM-`, `C0_5iXfI`), or 8+ hex digits with a digit.
    static func isDottedHash(_ part: Substring) -> Bool {
        let base64url = part.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }
        guard base64url else { return false }
        if part.count >= 8, part.allSatisfy(\.isHexDigit), part.contains(where: \.isNumber), part == part.lowercased() { return true }
        guard part.count == 8 else { return false }
        return part.contains(where: \.isNumber) || (part.contains(where: \.isUppercase) && part.contains(where: \.isLowercase))
    }

    /// Six or more letters and digits with a digit in them, or mixed case (base64url hashes).
    static func looksLikeHash(_ part: Substring) -> Bool {
        guard part.count >= 6, part.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else { return false }
        let digit = part.contains { $0.isNumber }
        let upper = part.contains { $0.isUppercase }, lower = part.contains { $0.isLowercase }
        return digit || (upper && lower && part.count >= 8)
    }
}

/// A command's discussion as the parser holds it, split the way its help prints it: paragraphs,
/// lines indented by two spaces kept as they are, and the `Example:` block, which the pages move
/// to their own EXAMPLES section.
struct Discussion {
    enum Block: Equatable {
        case paragraph(String)
        case preformatted([String])
    }

    private(set) var blocks: [Block] = []
    private(set) var examples: [String] = []

    init(_ text: String?) {
        var prose: [String] = []
        var verbatim: [String] = []
        var inExample = false
        func flush() {
            if !prose.isEmpty { blocks.append(.paragraph(prose.joined(separator: " "))) }
            if !verbatim.isEmpty { blocks.append(.preformatted(verbatim)) }
            prose = []
            verbatim = []
        }
        for line in (text ?? "").split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            let trimmed = line.trimming(" ")
            if trimmed == "Example:" || trimmed == "Examples:" {
                flush()
                inExample = true
            } else if line.hasPrefix("  "), !trimmed.isEmpty {
                if inExample {
                    examples.append(String(line.dropFirst(2)))
                } else {
                    if !prose.isEmpty { blocks.append(.paragraph(prose.joined(separator: " "))); prose = [] }
                    verbatim.append(String(line.dropFirst(2)))
                }
            } else if trimmed.isEmpty {
                flush()
            } else {
                inExample = false
                if !verbatim.isEmpty { blocks.append(.preformatted(verbatim)); verbatim = [] }
                prose.append(trimmed)
            }
        }
        flush()
    }

    /// roff for the blocks, for a DESCRIPTION section.
    var roff: [String] {
        blocks.flatMap { block -> [String] in
            switch block {
            case .paragraph(let text): [".PP", Roff.prose(text)]
            case .preformatted(let lines): Self.verbatim(lines)
            }
        }
    }

    /// Lines shown as typed, indented, not filled.
    static func verbatim(_ lines: [String]) -> [String] {
        [".PP", ".RS 4", ".nf"] + lines.map(Roff.literal) + [".fi", ".RE"]
    }
}

extension String {
    /// Without Foundation: `characters` removed from both ends.
    func trimming(_ characters: String) -> String {
        var text = self[...]
        while let first = text.first, characters.contains(first) { text.removeFirst() }
        while let last = text.last, characters.contains(last) { text.removeLast() }
        return String(text)
    }
}

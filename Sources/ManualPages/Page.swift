/// One man(7) page being written: its title line, then sections of roff lines.
struct Page {
    /// What every page's title line carries besides its name.
    struct Header {
        /// The date the pages are of (YYYY-MM-DD): the source's, so that a rebuild gives the same bytes.
        var date: String
        /// `cenariusd 0.1.0`.
        var source: String
    }

    let name: String
    let section: Int
    private(set) var lines: [String]

    init(name: String, section: Int, header: Header) {
        self.name = name
        self.section = section
        let manual = section == 5 ? "File Formats" : "User Commands"
        // Neither hyphenated nor justified: option and page names hold hyphens of their own, a
        // name broken across lines cannot be searched for or copied, and long paths would
        // stretch the spaces of the lines they end.
        lines = [".TH \(Roff.quoted(name.uppercased())) \"\(section)\" \(Roff.quoted(header.date)) \(Roff.quoted(header.source)) \(Roff.quoted(manual))", ".nh", ".ad l"]
    }

    var fileName: String { "\(name).\(section)" }
    var text: String { lines.joined(separator: "\n") + "\n" }

    mutating func section(_ title: String) {
        lines.append(".SH \(title)")
    }

    mutating func append(_ more: [String]) {
        lines += more
    }

    mutating func paragraph(_ prose: String) {
        lines += [".PP", Roff.prose(prose)]
    }

    /// A tagged paragraph: `term` is roff already, `prose` is text.
    mutating func item(_ term: String, _ prose: String) {
        lines += [".TP", term]
        if !prose.isEmpty { lines.append(Roff.prose(prose)) }
    }

    /// `cenariusd-sync(1), cenarius-config(5)`: references, comma-separated.
    mutating func references(_ names: [String]) {
        for (index, reference) in names.enumerated() {
            guard let open = reference.firstIndex(of: "(") else { continue }
            let comma = index == names.count - 1 ? "" : ","
            lines.append(".BR \(Roff.literal(String(reference[..<open]))) \(reference[open...])\(comma)")
        }
    }

    /// NAME: the line `whatis` and `apropos` index (`name \- summary`).
    mutating func name(_ summary: String) {
        section("NAME")
        var summary = summary
        if summary.hasSuffix(".") { summary.removeLast() }
        lines.append(Roff.literal(name) + " \\- " + Roff.prose(summary))
    }
}

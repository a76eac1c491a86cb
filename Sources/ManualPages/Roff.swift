/// Text as man(7) source. Every line of text goes through here, so nothing from the command tree's
/// help can be read by troff as a request, an escape or a minus sign it was not meant to be.
enum Roff {
    /// Prose: the hyphens of a word that starts with one (an option named in a sentence,
    /// `--signatures-required`) become minus signs, so that the page can be searched and copied
    /// from; one inside a word (`hot-deploy`) stays a hyphen. `` `code` `` becomes bold.
    static func prose(_ text: String) -> String {
        var out = ""
        var previous: Character?
        var inOption = false
        var inCode = false
        for character in text {
            if character == "`" {
                out += inCode ? "\\fR" : "\\fB"
                inCode.toggle()
            } else if character == "-", inOption || previous.map(startsWord) ?? true {
                out += "\\-"
                inOption = true
            } else {
                out += escape(character)
                if character.isWhitespace { inOption = false }
            }
            previous = character
        }
        if inCode { out += "\\fR" }
        return guardLine(out)
    }

    /// A command line, an option's name, a file name: every hyphen is a minus sign (ASCII when copied).
    static func literal(_ text: String) -> String {
        guardLine(text.map { $0 == "-" ? "\\-" : escape($0) }.joined())
    }

    static func bold(_ text: String) -> String { "\\fB" + literal(text) + "\\fR" }
    static func italic(_ text: String) -> String { "\\fI" + literal(text) + "\\fR" }

    /// A `.TH` argument: quoted, so that spaces stay inside one argument.
    static func quoted(_ text: String) -> String {
        "\"" + text.map { $0 == "\"" ? "\\(dq" : escape($0) }.joined() + "\""
    }

    /// A line of its own that troff must not read as a request (`.`, `'`) or as a break (a space).
    private static func guardLine(_ line: String) -> String {
        guard let first = line.first, first == "." || first == "'" || first == " " else { return line }
        return "\\&" + line
    }

    private static func startsWord(_ character: Character) -> Bool {
        character.isWhitespace || "([{\"'`/=,|".contains(character)
    }

    /// groff's own names where they exist, so the page also renders on an ASCII terminal; other
    /// characters by code point (rendered on UTF-8 terminals; the tests render every page both ways).
    private static func escape(_ character: Character) -> String {
        switch character {
        case "\\": return "\\e"
        case "→": return "\\(->"
        case "←": return "\\(<-"
        case "…": return ".\\|.\\|."
        case "—": return "\\(em"
        case "–": return "\\(en"
        case "×": return "\\(mu"
        case "≤": return "\\(<="
        case "≥": return "\\(>="
        case "‘": return "\\(oq"
        case "’": return "\\(cq"
        case "“": return "\\(lq"
        case "”": return "\\(rq"
        default:
            guard character.isASCII else {
                return character.unicodeScalars.map { "\\[u" + hex($0.value) + "]" }.joined()
            }
            return String(character)
        }
    }

    private static func hex(_ value: UInt32) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}

/// One entry of an OPTIONS section: the spellings of an argument and what its help says.
struct OptionEntry {
    let term: String
    let help: String

    /// The arguments in the parser's order; an inverted pair (`--develop`/`--no-develop`, one help
    /// text) is one entry, as `--help` prints it.
    static func entries(_ arguments: [ArgumentInfo]) -> [OptionEntry] {
        var entries: [OptionEntry] = []
        var index = arguments.startIndex
        while index < arguments.endIndex {
            let argument = arguments[index]
            let next = arguments.index(after: index)
            if next < arguments.endIndex, isInversion(arguments[next], of: argument) {
                entries.append(OptionEntry(argument, inverse: arguments[next]))
                index = arguments.index(after: next)
            } else {
                entries.append(OptionEntry(argument, inverse: nil))
                index = next
            }
        }
        return entries
    }

    private static func isInversion(_ candidate: ArgumentInfo, of argument: ArgumentInfo) -> Bool {
        guard argument.kind == .flag, candidate.kind == .flag, let name = argument.longName else { return false }
        return candidate.longName == "no-" + name && candidate.abstract == argument.abstract
    }

    private init(_ argument: ArgumentInfo, inverse: ArgumentInfo?) {
        let spellings = argument.spellings + (inverse?.spellings ?? [])
        switch argument.kind {
        case .positional:
            term = Roff.italic(argument.valueName ?? "argument") + (argument.isRepeating ? " .\\|.\\|." : "")
        case .flag:
            term = spellings.map(Roff.bold).joined(separator: ", ")
        case .option:
            term = spellings.map(Roff.bold).joined(separator: ", ") + " " + Roff.italic(argument.valueName ?? "value")
        }
        var help = [argument.abstract, argument.discussion].compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: " ")
        if let value = argument.defaultValue, !help.lowercased().contains("default") {
            help += (help.isEmpty ? "" : " ") + "Default: \(value)."
        }
        if argument.isRepeating, argument.kind == .option, !help.lowercased().contains("repeat") {
            help += (help.isEmpty ? "" : " ") + "Repeatable."
        }
        self.help = help
    }
}

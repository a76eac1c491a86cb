import RouteSync
import Settings

/// The page of one command, `cenariusd.1` for the root and `cenariusd-<sub>.1` for each subcommand:
/// everything its `--help` says, plus the sections only a manual has.
struct CommandPage {
    let command: CommandInfo
    let isRoot: Bool
    let header: Page.Header

    var page: Page {
        var page = Page(name: command.pageName, section: 1, header: header)
        let discussion = Discussion(command.discussion)
        page.name(command.abstract ?? command.invocation)
        page.section("SYNOPSIS")
        page.append(synopsis)
        page.section("DESCRIPTION")
        if let abstract = command.abstract { page.paragraph(abstract) }
        page.append(discussion.roff)
        if !command.visibleSubcommands.isEmpty {
            page.section("COMMANDS")
            for sub in command.visibleSubcommands {
                page.item(Roff.bold(sub.commandName) + usageTail(of: sub), (sub.abstract ?? "") + reference(to: sub))
            }
        }
        page.section("OPTIONS")
        for entry in OptionEntry.entries(command.visibleArguments) {
            page.item(entry.term, entry.help)
        }
        page.section("EXIT STATUS")
        page.paragraph(Reference.exitStatusIntroduction)
        for code in CenariusError.Code.allCases {
            page.item(Roff.bold(String(code.rawValue)), "\(code.name): \(Reference.meaning(code))")
        }
        if isRoot {
            environment(&page)
            page.section("FILES")
            for file in Reference.files { page.item(Roff.bold(file.path), file.text) }
        }
        if !discussion.examples.isEmpty {
            page.section("EXAMPLES")
            page.append(Discussion.verbatim(discussion.examples))
        }
        page.section("SEE ALSO")
        page.references(seeAlso)
        return page
    }

    /// The lines a user types: every positional argument by name, options as one placeholder (the
    /// OPTIONS section lists them all).
    private var synopsis: [String] {
        let tail = command.visibleSubcommands.isEmpty ? usageTail(of: command) : " \\fIcommand\\fR [\\fIoptions\\fR]"
        var lines = [Roff.bold(command.invocation) + tail]
        if isRoot {
            lines += [".br", Roff.bold(command.invocation + " --version")]
        }
        return lines
    }

    private func usageTail(of command: CommandInfo) -> String {
        var tail = ""
        let arguments = command.visibleArguments
        if arguments.contains(where: { $0.kind != .positional && !["help", "version"].contains($0.longName ?? "") }) {
            tail += " [\\fIoptions\\fR]"
        }
        for argument in arguments where argument.kind == .positional {
            let name = Roff.italic(argument.valueName ?? "argument") + (argument.isRepeating ? " .\\|.\\|." : "")
            tail += argument.isOptional ? " [\(name)]" : " \(name)"
        }
        return tail
    }

    private func reference(to sub: CommandInfo) -> String {
        CommandPage.hasPage(sub) ? " See \(sub.pageName)(1)." : ""
    }

    /// The parser's own `help` command has no page: `--help` says what it would.
    static func hasPage(_ command: CommandInfo) -> Bool { command.commandName != "help" }

    private var seeAlso: [String] {
        var names: [String] = []
        if let parents = command.superCommands, !parents.isEmpty {
            names.append(parents.joined(separator: "-") + "(1)")
        }
        names += command.visibleSubcommands.filter(CommandPage.hasPage).map { $0.pageName + "(1)" }
        return names + (isRoot ? Reference.seeAlso : ["cenarius-config(5)"])
    }

    private func environment(_ page: inout Page) {
        page.section("ENVIRONMENT")
        for setting in Settings.all {
            page.item(Roff.bold(setting.environmentName), Reference.environmentText(for: setting))
        }
        for variable in Reference.environment + Reference.hookEnvironment {
            page.item(Roff.bold(variable.name), variable.text)
        }
    }
}

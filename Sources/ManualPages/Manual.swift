/// Every page of the manual: the root command's, one per subcommand (recursively), and the
/// configuration file's.
enum Manual {
    static func pages(of tool: ToolInfo, header: Page.Header) throws -> [Page] {
        var pages = [CommandPage(command: tool.command, isRoot: true, header: header).page]
        func walk(_ command: CommandInfo) {
            for sub in command.visibleSubcommands where CommandPage.hasPage(sub) {
                pages.append(CommandPage(command: sub, isRoot: false, header: header).page)
                walk(sub)
            }
        }
        walk(tool.command)
        pages.append(try ConfigPage(root: tool.command, header: header).page())
        return pages
    }
}

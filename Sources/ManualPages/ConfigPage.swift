import RouteSync
import Settings

/// cenarius-config(5): every key of the configuration file, from the settings table (key, type,
/// range, variable) and the help of the option of the same name (what it means).
struct ConfigPage {
    struct MissingOption: Error, CustomStringConvertible {
        let key: String
        var description: String { "the setting '\(key)' has no --\(key) option in the command tree: its meaning would be missing from cenarius-config(5)" }
    }

    struct RefusedExample: Error, CustomStringConvertible {
        let reason: String
        var description: String { "cenariusd refuses the example of cenarius-config(5): \(reason)" }
    }

    let root: CommandInfo
    let header: Page.Header

    func page() throws -> Page {
        do {
            _ = try ConfigFile.check(Array(Reference.configExample.utf8), path: "the example")
        } catch {
            throw RefusedExample(reason: error.message)
        }
        var page = Page(name: "cenarius-config", section: 5, header: header)
        page.name("configuration file of cenariusd")
        page.section("SYNOPSIS")
        page.append([Roff.bold("/etc/cenarius/config.json"), ".br", Roff.bold("$XDG_CONFIG_HOME/cenarius/config.json")])
        page.section("DESCRIPTION")
        for paragraph in Reference.configDescription { page.paragraph(paragraph) }
        page.section("KEYS")
        let options = optionsByName()
        for setting in Settings.all {
            guard let option = options[setting.key] else { throw MissingOption(key: setting.key) }
            var text = option.abstract ?? ""
            if Settings.serve.contains(setting) { text = "serve only. " + text }
            text += " Value: \(setting.kind.spoken)"
            if let range = setting.range { text += ", \(Self.number(range.lowerBound)) to \(Self.number(range.upperBound))" }
            text += ". Also \(setting.flag) and \(setting.environmentName)."
            page.item(Roff.bold(setting.key), text)
        }
        page.section("EXAMPLE")
        page.append(Discussion.verbatim(Reference.configExample.split(separator: "\n").map(String.init)))
        page.section("SEE ALSO")
        page.references(["cenariusd(1)", "cenariusd-serve(1)"] + Reference.seeAlso.filter { !$0.hasPrefix("cenarius-config") })
        return page
    }

    /// 9007199254740992, not 9.007199254740992e15; 0.001 as it is.
    private static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 0x1p62 ? String(Int(value)) : String(value)
    }

    /// Each long option of the tree by name, the first command's help where several commands share it.
    private func optionsByName() -> [String: ArgumentInfo] {
        var options: [String: ArgumentInfo] = [:]
        func walk(_ command: CommandInfo) {
            for argument in command.arguments ?? [] where argument.kind != .positional {
                if let name = argument.longName, options[name] == nil { options[name] = argument }
            }
            (command.subcommands ?? []).forEach(walk)
        }
        walk(root)
        return options
    }
}

/// The part of swift-argument-parser's `--experimental-dump-help` output (ToolInfo, serialization
/// version 0) the pages are made from. Mirrored here because the parser's own `ArgumentParserToolInfo`
/// module is not one of its products, so no other package can import it.
struct ToolInfo: Decodable {
    var serializationVersion: Int
    var command: CommandInfo
}

struct CommandInfo: Decodable {
    var commandName: String
    var superCommands: [String]?
    var abstract: String?
    var discussion: String?
    var shouldDisplay: Bool?
    var subcommands: [CommandInfo]?
    var arguments: [ArgumentInfo]?

    /// `cenariusd sync`: how a user types it.
    var invocation: String { ((superCommands ?? []) + [commandName]).joined(separator: " ") }
    /// `cenariusd-sync`: the page's name, as git names its subcommands' pages.
    var pageName: String { ((superCommands ?? []) + [commandName]).joined(separator: "-") }
    var visibleSubcommands: [CommandInfo] { (subcommands ?? []).filter { $0.shouldDisplay ?? true } }
    var visibleArguments: [ArgumentInfo] { (arguments ?? []).filter(\.shouldDisplay) }
}

struct ArgumentInfo: Decodable {
    enum Kind: String, Decodable { case positional, option, flag }

    struct Name: Decodable {
        enum Kind: String, Decodable { case long, short, longWithSingleDash }
        var kind: Kind
        var name: String

        /// As typed: `--remote`, `-h`, `-help`.
        var spelled: String {
            switch kind {
            case .long: "--" + name
            case .short, .longWithSingleDash: "-" + name
            }
        }
    }

    var kind: Kind
    var shouldDisplay: Bool
    var isOptional: Bool
    var isRepeating: Bool
    var names: [Name]?
    var valueName: String?
    var defaultValue: String?
    var abstract: String?
    var discussion: String?

    var spellings: [String] { (names ?? []).map(\.spelled) }

    var longName: String? { names?.first { $0.kind == .long }?.name }
}

import ArgumentParser
import Foundation

/// `cenariusd --experimental-dump-help | cenariusd-manual --output DIR --version V --date D`
/// (`make man`): cenariusd's man pages, made from the command tree the binary itself parses with, so
/// that a page cannot describe a flag the program does not have or miss one it has.
@main
struct ManualCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cenariusd-manual",
        abstract: "Write cenariusd's man pages from its --experimental-dump-help output.")

    @Argument(help: "The dump, a file or - for standard input.")
    var input = "-"

    @Option(help: "Folder the pages are written to (made if missing).")
    var output: String

    @Option(help: "The version the pages describe (cenariusd --version).")
    var version: String

    @Option(help: "The pages' date, YYYY-MM-DD: the source's, so that a rebuild writes the same bytes.")
    var date: String

    func validate() throws {
        let parts = date.split(separator: "-")
        guard parts.count == 3, parts.map(\.count) == [4, 2, 2], parts.allSatisfy({ $0.allSatisfy(\.isASCIIDigit) }) else {
            throw ValidationError("--date must be YYYY-MM-DD, not '\(date)'")
        }
    }

    func run() throws {
        let data = input == "-" ? FileHandle.standardInput.readDataToEndOfFile() : try Data(contentsOf: URL(fileURLWithPath: input))
        let tool: ToolInfo
        do {
            tool = try JSONDecoder().decode(ToolInfo.self, from: data)
        } catch {
            throw ValidationError("\(input == "-" ? "standard input" : input) is not cenariusd --experimental-dump-help output: \(error)")
        }
        guard tool.serializationVersion == 0 else {
            throw ValidationError("the dump is of serialization version \(tool.serializationVersion); this generator reads version 0")
        }
        let pages = try Manual.pages(of: tool, header: Page.Header(date: date, source: "\(tool.command.commandName) \(version)"))
        try FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: true)
        for page in pages {
            try Data(page.text.utf8).write(to: URL(fileURLWithPath: output).appendingPathComponent(page.fileName))
        }
        print("wrote \(pages.count) pages to \(output)")
    }
}

extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }
}

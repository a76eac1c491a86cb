import Foundation
import RouteSync
import Testing

/// The man pages (`make man`) made from the built binary's own command tree: every command and every
/// flag it parses has its entry, the sections only a manual has are there, and man renders every page
/// without a warning.
@Suite struct ManualPagesTests {
    static let man = "/usr/bin/man"

    /// One generator run on the real `--experimental-dump-help`, shared by the tests.
    struct Pages {
        let tree: [String: Any]
        let folder: String

        init() throws {
            let dump = try Binary.run(["--experimental-dump-help"])
            try #require(dump.status == 0, "\(dump.stderr)")
            let root = try #require(try JSONSerialization.jsonObject(with: Data(dump.stdout.utf8)) as? [String: Any])
            tree = try #require(root["command"] as? [String: Any])
            let dir = try Scratch()
            try dir.write("dump.json", dump.stdout)
            folder = dir.path("man")
            let generator = URL(fileURLWithPath: Binary.path).deletingLastPathComponent().appendingPathComponent("cenariusd-manual").path
            let run = try Binary.run([dir.path("dump.json"), "--output", folder, "--version", "9.9.9", "--date", "2026-01-02"], executable: generator)
            try #require(run.status == 0, "cenariusd-manual: \(run.stderr)")
        }

        func page(_ name: String) throws -> String {
            try String(contentsOfFile: folder + "/" + name, encoding: .utf8)
        }

        /// Every command but the parser's own `help` (which has no page), with its words from the root.
        var commands: [(path: [String], command: [String: Any])] {
            var all: [(path: [String], command: [String: Any])] = []
            func walk(_ command: [String: Any], _ path: [String]) {
                all.append((path, command))
                for sub in command["subcommands"] as? [[String: Any]] ?? [] where sub["commandName"] as? String != "help" {
                    walk(sub, path + [sub["commandName"] as? String ?? ""])
                }
            }
            walk(tree, [tree["commandName"] as? String ?? ""])
            return all
        }
    }

    /// A section's lines, from `.SH TITLE` to the next `.SH`.
    static func section(_ title: String, of page: String) -> String? {
        guard let start = page.range(of: "\n.SH \(title)\n") else { return nil }
        let rest = page[start.upperBound...]
        return String(rest[..<(rest.range(of: "\n.SH ")?.lowerBound ?? rest.endIndex)])
    }

    /// The help line of the `.TP` entry whose term line names `term`; nil when there is no such entry.
    static func help(of term: String, in section: String) -> String? {
        let lines = section.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        for index in lines.indices.dropFirst() where lines[index - 1] == ".TP" && lines[index].contains(term) {
            let next = index + 1 < lines.count ? lines[index + 1] : ""
            return next.hasPrefix(".") ? "" : next
        }
        return nil
    }

    static func roff(_ text: String) -> String { text.replacingOccurrences(of: "-", with: "\\-") }

    @Test func everyCommandAndFlagHasItsEntry() throws {
        let pages = try Pages()
        #expect(pages.commands.count > 10)
        for (path, command) in pages.commands {
            let name = path.joined(separator: "-") + ".1"
            let page = try pages.page(name)
            for title in ["NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "EXIT STATUS", "SEE ALSO"] {
                #expect(Self.section(title, of: page) != nil, "\(name) has no \(title)")
            }
            if (command["discussion"] as? String)?.contains("Example:") == true {
                #expect(Self.section("EXAMPLES", of: page) != nil, "\(name) has no EXAMPLES")
            }
            let options = Self.section("OPTIONS", of: page) ?? ""
            for argument in command["arguments"] as? [[String: Any]] ?? [] where argument["shouldDisplay"] as? Bool != false {
                let names = argument["names"] as? [[String: String]] ?? []
                let terms = names.isEmpty
                    ? ["\\fI\(Self.roff(argument["valueName"] as? String ?? ""))\\fR"]
                    : names.map { "\\fB\(Self.roff(($0["kind"] == "long" ? "--" : "-") + ($0["name"] ?? "")))\\fR" }
                for term in terms {
                    let help = Self.help(of: term, in: options)
                    #expect(help != nil, "\(name): no entry for \(term)")
                    if argument["abstract"] != nil { #expect(help?.isEmpty == false, "\(name): the entry for \(term) has no help") }
                }
            }
            let status = Self.section("EXIT STATUS", of: page) ?? ""
            for code in CenariusError.Code.allCases {
                #expect(status.contains("\\fB\(code.rawValue)\\fR"), "\(name): exit status \(code.rawValue) is missing")
            }
        }
    }

    @Test func theOverviewListsEveryCommandAndTheManualOnlySections() throws {
        let pages = try Pages()
        let overview = try pages.page("cenariusd.1")
        for title in ["COMMANDS", "EXIT STATUS", "ENVIRONMENT", "FILES", "EXAMPLES", "SEE ALSO"] {
            #expect(Self.section(title, of: overview) != nil, "cenariusd.1 has no \(title)")
        }
        let commands = Self.section("COMMANDS", of: overview) ?? ""
        let seeAlso = Self.section("SEE ALSO", of: overview) ?? ""
        for sub in pages.tree["subcommands"] as? [[String: Any]] ?? [] {
            let name = try #require(sub["commandName"] as? String)
            #expect(commands.contains("\\fB\(Self.roff(name))\\fR"), "cenariusd.1 does not list \(name)")
            if name != "help" { #expect(seeAlso.contains(".BR cenariusd\\-\(Self.roff(name)) (1)"), "cenariusd.1 does not refer to cenariusd-\(name)(1)") }
        }
        let environment = Self.section("ENVIRONMENT", of: overview) ?? ""
        for variable in ["CENARIUS_REMOTE", "CENARIUS_CONFIG", "CENARIUS_TOKEN", "NOTIFY_SOCKET", "WATCHDOG_USEC", "JOURNAL_STREAM"] {
            #expect(environment.contains("\\fB\(variable)\\fR"), "cenariusd.1 ENVIRONMENT lacks \(variable)")
        }
        #expect(Self.section("FILES", of: overview)?.contains("/etc/cenarius/config.json") == true)
    }

    /// dist/config.example.json's keys are documented in cenarius-config(5).
    @Test func theConfigurationPageHasEveryKey() throws {
        let pages = try Pages()
        let config = try pages.page("cenarius-config.5")
        let keys = Self.section("KEYS", of: config) ?? ""
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let example = try Data(contentsOf: source.appendingPathComponent("dist/config.example.json"))
        let object = try #require(try JSONSerialization.jsonObject(with: example) as? [String: Any])
        for key in object.keys {
            #expect(keys.contains(".TP\n\\fB\(Self.roff(key))\\fR\n"), "cenarius-config.5 lacks \(key)")
        }
        for key in ["remote", "public-key", "confirm-timeout", "report-url", "max-rate"] {
            #expect(keys.contains(".TP\n\\fB\(Self.roff(key))\\fR\n"), "cenarius-config.5 lacks \(key)")
        }
    }

    /// What lintian runs on every page of a package, on a UTF-8 and on an ASCII terminal.
    @Test(.enabled(if: Requirement.inCI || FileManager.default.isExecutableFile(atPath: man), "needs man (man-db; make test-deps installs it)"))
    func everyPageRendersWithoutAWarning() throws {
        let pages = try Pages()
        let names = try FileManager.default.contentsOfDirectory(atPath: pages.folder).sorted()
        #expect(names.count == pages.commands.count + 1)
        for name in names {
            for locale in ["C.UTF-8", "C"] {
                let run = try Binary.run(["--warnings", "-l", pages.folder + "/" + name], environment: ["MANWIDTH": "80", "LC_ALL": locale, "MAN_DISABLE_SECCOMP": "1"],
                                         executable: Self.man)
                #expect(run.status == 0 && run.stderr.isEmpty, "man -l \(name) (\(locale)): \(run.stderr)")
                #expect(run.stdout.contains("NAME"), "man -l \(name) printed nothing")
            }
        }
    }
}

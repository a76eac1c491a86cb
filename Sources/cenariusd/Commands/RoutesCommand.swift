import ArgumentParser
import RouteSync

struct RoutesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "routes",
        abstract: "Write the route table of a folder (publishers), or check it.",
        discussion: """
            Hashes every regular file under DIR (hidden files, symlinks and the table itself are left \
            out) and writes DIR/Routes.json sorted by uri, with sizes. --check compares instead and \
            exits 4 when the table is out of date.

            Example:
              cenariusd routes ./www
              cenariusd routes ./www --check
            """)

    @Argument(help: ArgumentHelp("The folder to describe.", valueName: "dir"))
    var directory: String

    @Option(help: ArgumentHelp("Where to write the table (default DIR/Routes.json; - for stdout).", valueName: "file"))
    var output: String?

    @Option(help: "Hash algorithm: md5 (Cenarius' own) or sha256.")
    var algorithm: String = "md5"

    @Flag(help: "Compare with the existing table; exit 4 if it is out of date.") var check = false
    @Option(help: ArgumentHelp("Ed25519 private key: also write Routes.json.sig (G8).", valueName: "file")) var signKey: String?
    @Option(help: ArgumentHelp("Version signed into the sidecar; must grow with every release (default: now, in seconds).", valueName: "n")) var tableVersion: Int64?
    @Flag(help: "Print one JSON object.") var json = false

    @Option(help: ArgumentHelp("File name of the route table.", valueName: "name"))
    var routesName: String = "Routes.json"

    struct Summary: Encodable {
        var table: String
        var entries: Int
        var bytes: Int64
        var skipped: [String]
        var upToDate: Bool?
        var difference: String?
    }

    func validate() throws {
        guard ContentHash.Algorithm(rawValue: algorithm) != nil else { throw ValidationError("--algorithm must be md5 or sha256") }
    }

    func run() async throws {
        let builder = RouteTableBuilder(root: directory, routesName: routesName, algorithm: ContentHash.Algorithm(rawValue: algorithm)!)
        let result = try builder.build()
        for (path, reason) in result.skipped { Output.warn("skipped \(path): \(reason)") }
        let target = output ?? FileSystem.join(directory, routesName)
        var summary = Summary(table: target, entries: result.table.count, bytes: result.bytes, skipped: result.skipped.map(\.path))
        if check {
            let existing = try RouteTable.parse(FileSystem.readFile(target), source: target)
            let difference = TableDifference(from: existing, to: result.table)
            summary.upToDate = difference.isEmpty
            summary.difference = difference.summary
            if json { Output.json(summary) } else if difference.isEmpty { Output.line("\(target) is up to date (\(result.table.count) entries)") }
            if !difference.isEmpty { throw CenariusError.integrity("\(target) is out of date: \(difference.summary)") }
            return
        }
        let bytes = result.table.serialized()
        if target == "-" {
            print(String(decoding: bytes, as: UTF8.self), terminator: "")
            return
        }
        try FileSystem.writeAtomically(bytes, to: target)
        if let signKey {
            let version = tableVersion ?? Int64(FileSystem.now())
            let signature = try TableSignature.sign(table: bytes, version: version, with: SigningKeys.readPrivate(signKey))
            try FileSystem.writeAtomically(signature.serialized(), to: target + ".sig")
            if !json { Output.line("signed \(target).sig: version \(version), key \(signature.keyID)") }
        }
        if json { Output.json(summary) } else { Output.line("wrote \(target): \(result.table.count) entries, \(Output.bytes(result.bytes))") }
    }
}

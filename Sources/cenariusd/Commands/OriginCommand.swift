import ArgumentParser
import Daemon
import RouteSync
#if canImport(Glibc)
import Glibc
#endif

struct OriginCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "origin",
        abstract: "Serve a folder as a remote (with ETag/304 and Range) to try a site locally.",
        discussion: """
            Example:
              cenariusd routes ./www && cenariusd origin ./www --port 8701
              cenariusd sync --remote http://127.0.0.1:8701 --cache /tmp/cache
            """)

    @Argument(help: ArgumentHelp("The folder to serve.", valueName: "dir"))
    var directory: String

    @Option(help: "Port (0 picks a free one).") var port: Int = 8701
    @Option(help: "Address to bind.") var bind: String = "127.0.0.1"

    func run() async throws {
        guard FileSystem.isDirectory(directory) else { throw CenariusError.notFound("no such folder \(directory)") }
        let origin = Origin(root: directory, host: bind, port: port)
        let directory = directory
        let bind = bind
        try await origin.run { port in
            print("origin: serving \(directory) on http://\(bind):\(port)")
            fflush(nil)
        }
    }
}

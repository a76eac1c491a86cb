import ArgumentParser
import RouteSync
#if canImport(Glibc)
import Glibc
#endif

struct KeygenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keygen",
        abstract: "Write an Ed25519 key pair for signing route tables (G8).",
        discussion: """
            Writes NAME.key (private, mode 0600: keep it with the publisher) and NAME.pub (ship it \
            with the devices, pass it as --public-key).

            Example:
              cenariusd keygen --output keys/release
              cenariusd routes www --sign-key keys/release.key
              cenariusd sync --public-key keys/release.pub --remote https://cdn.example.com/app/www
            """)

    @Option(help: ArgumentHelp("Path prefix of the two files.", valueName: "name")) var output: String = "cenarius"
    @Flag(help: "Overwrite existing files.") var force = false

    func run() async throws {
        let privatePath = output + ".key"
        let publicPath = output + ".pub"
        if !force, FileSystem.exists(privatePath) || FileSystem.exists(publicPath) {
            throw CenariusError.usage("\(privatePath) or \(publicPath) exists; pass --force to overwrite")
        }
        try FileSystem.makeDirectories(FileSystem.parentDirectory(of: FileSystem.absolute(privatePath)))
        let pair = SigningKeys.generate()
        let files = SigningKeys.encoded(pair)
        let oldMask = umask(0o077)
        defer { umask(oldMask) }
        try FileSystem.writeAtomically(files.private, to: privatePath)
        chmod(privatePath, 0o600)
        try FileSystem.writeAtomically(files.public, to: publicPath)
        chmod(publicPath, 0o644)
        Output.line("wrote \(privatePath) (private) and \(publicPath) (public), key id \(TableSignature.keyID(of: pair.public))")
    }
}

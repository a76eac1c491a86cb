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
            with the devices, pass it as --public-key). With --rotate-from OLD.key it also writes \
            NAME.rotation, the old key's statement that the new one replaces it: publish it with \
            routes --rotation and devices that trust the old key move to the new one (G8).

            Example:
              cenariusd keygen --output keys/release
              cenariusd routes www --sign-key keys/release.key
              cenariusd sync --public-key keys/release.pub --remote https://cdn.example.com/app/www
              cenariusd keygen --output keys/release-2 --rotate-from keys/release.key
              cenariusd routes www --sign-key keys/release-2.key --rotation keys/release-2.rotation
            """)

    @Option(help: ArgumentHelp("Path prefix of the two files.", valueName: "name")) var output: String = "cenarius"
    @Option(help: ArgumentHelp("The private key the new pair replaces: also write NAME.rotation, signed by it.", valueName: "file")) var rotateFrom: String?
    @Flag(help: "Overwrite existing files.") var force = false

    func run() async throws {
        let privatePath = output + ".key"
        let publicPath = output + ".pub"
        let rotationPath = output + ".rotation"
        let paths = [privatePath, publicPath] + (rotateFrom == nil ? [] : [rotationPath])
        if !force, let existing = paths.first(where: FileSystem.exists) {
            throw CenariusError.usage("\(existing) exists; pass --force to overwrite")
        }
        let old = try rotateFrom.map { (path) throws(CenariusError) in try SigningKeys.readPrivate(path) }
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
        if let old {
            try FileSystem.writeAtomically(KeyRotation.make(from: old, to: pair.public).serialized(), to: rotationPath)
            chmod(rotationPath, 0o644)
            Output.line("wrote \(rotationPath): key \(TableSignature.keyID(of: old)) hands over to key \(TableSignature.keyID(of: pair.public))")
        }
    }
}

import Foundation

/// A minimal Debian (`debootstrap --variant=minbase`) of the tests' own, in `.build-debootstrap/`
/// beside the package's sources, made once and reused by later runs: a package test leaves it as it
/// found it (the package and the dependencies it pulled in are purged).
struct DebianRoot {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    let path: String
    /// How long making it took; nil when an earlier run's was reused.
    private(set) var madeIn: Duration?

    /// The host's release from the host's mirror: the package's Depends were computed against the
    /// host's libraries, and the mirror is the one network place the tests may reach.
    static var suite: String {
        let release = (try? String(contentsOfFile: "/etc/os-release", encoding: .utf8)) ?? ""
        let fields = Dictionary(release.split(separator: "\n").compactMap { line -> (String, String)? in
            let parts = line.split(separator: "=", maxSplits: 1).map { String($0).trimmingCharacters(in: CharacterSet(charactersIn: "\"")) }
            return parts.count == 2 ? (parts[0], parts[1]) : nil
        }, uniquingKeysWith: { first, _ in first })
        guard fields["ID"] == "debian", let codename = fields["VERSION_CODENAME"], !codename.isEmpty else { return "bookworm" }
        return codename
    }

    /// The first Debian archive apt uses here (one-line or deb822 sources); Debian's own otherwise.
    static var mirror: String {
        var files = ["/etc/apt/sources.list"]
        let folder = "/etc/apt/sources.list.d"
        files += ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted()
            .filter { $0.hasSuffix(".list") || $0.hasSuffix(".sources") }.map { folder + "/" + $0 }
        for file in files {
            guard let text = try? String(contentsOfFile: file, encoding: .utf8) else { continue }
            for line in text.split(separator: "\n") {
                let words = line.split(whereSeparator: \.isWhitespace).map(String.init)
                var uris: [String] = []
                if words.first == "deb" {
                    // deb [options] URI suite components
                    var rest = words.dropFirst()
                    if rest.first?.hasPrefix("[") == true { rest = rest.drop { !$0.hasSuffix("]") }.dropFirst() }
                    uris = Array(rest.prefix(1))
                } else if words.first == "URIs:" {
                    uris = Array(words.dropFirst())
                }
                if let uri = uris.first(where: { $0.hasSuffix("/debian") || $0.hasSuffix("/debian/") }) { return uri }
            }
        }
        return "http://deb.debian.org/debian"
    }

    /// Makes it unless an earlier run did (its marker is written last, so a half-made one is made again).
    init(under folder: String) throws {
        path = folder + "/\(Self.suite)-minbase"
        // Named after what is installed on top of minbase, so that a root made without it is made again.
        let marker = path + "/.cenarius-base-man-db-systemd"
        Self.unmount(under: path)
        if FileManager.default.fileExists(atPath: marker) { return }
        try? FileManager.default.removeItem(atPath: path)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let clock = ContinuousClock()
        let start = clock.now
        try Self.check(Binary.run(["--variant=minbase", Self.suite, path, Self.mirror], executable: "/usr/sbin/debootstrap"), "debootstrap")
        // man-db to read the pages; systemd for systemd-analyze, which checks the unit as installed.
        try run("apt-get update -qq && apt-get install -y -qq --no-install-recommends man-db systemd >/dev/null", "installing man-db and systemd")
        madeIn = clock.now - start
        try Data().write(to: URL(fileURLWithPath: marker))
    }

    /// `script` through /bin/sh in the root, with /proc mounted for as long as it runs and the
    /// host's resolver (apt reaches the mirror).
    @discardableResult
    func run(_ script: String, _ what: String? = nil) throws -> Binary.Run {
        try? FileManager.default.removeItem(atPath: path + "/etc/resolv.conf")
        try FileManager.default.copyItem(atPath: "/etc/resolv.conf", toPath: path + "/etc/resolv.conf")
        let proc = path + "/proc"
        let mounted = (try? Binary.run(["-t", "proc", "proc", proc], executable: "/bin/mount"))?.status == 0
        defer { if mounted { _ = try? Binary.run([proc], executable: "/bin/umount") } }
        let result = try Binary.run([path, "/usr/bin/env", "-i", "PATH=/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/root", "LC_ALL=C.UTF-8",
                                     "DEBIAN_FRONTEND=noninteractive", "/bin/sh", "-c", script],
                                    killAfter: 600, executable: "/usr/sbin/chroot")
        if let what { try Self.check(result, what) }
        return result
    }

    /// What a run that was killed left mounted in the root, deepest first: removing a root with the
    /// host's /proc still mounted in it would reach into the host.
    private static func unmount(under path: String) {
        let mounts = (try? String(contentsOfFile: "/proc/mounts", encoding: .utf8)) ?? ""
        let points = mounts.split(separator: "\n").compactMap { $0.split(separator: " ").dropFirst().first.map(String.init) }
        for point in points.filter({ $0.hasPrefix(path + "/") }).sorted(by: { $0.count > $1.count }) {
            _ = try? Binary.run([point], executable: "/bin/umount")
        }
    }

    /// The path of `inside` (absolute, in the root) on the host.
    func host(_ inside: String) -> String { path + inside }

    private static func check(_ run: Binary.Run, _ what: String) throws {
        guard run.status != 0 else { return }
        throw Failure(description: "\(what) failed (exit \(run.status)):\n\(run.stdout.suffix(2000))\n\(run.stderr.suffix(4000))")
    }
}

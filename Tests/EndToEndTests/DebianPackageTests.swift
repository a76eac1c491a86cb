import Foundation
import Testing

/// The Debian package (`make deb`) as an administrator meets it, in a minimal Debian of the test's
/// own (`DebianRoot`): installed with apt (its Depends come from the mirror), run, read with man,
/// completed by bash, its unit checked by systemd, then removed and purged with nothing of it left. The package is the one named
/// by CENARIUS_DEB (`.ci/run` builds it first); without it the test is skipped, or fails under CI.
@Suite struct DebianPackageTests {
    static let package = ProcessInfo.processInfo.environment["CENARIUS_DEB"].flatMap { $0.isEmpty ? nil : $0 }
    static let debootstrap = "/usr/sbin/debootstrap"
    static var canRun: Bool { package != nil && getuid() == 0 && FileManager.default.isExecutableFile(atPath: debootstrap) }

    @Test(.enabled(if: Requirement.inCI || canRun,
                   "needs CENARIUS_DEB=/path/to/cenariusd_<version>_<arch>.deb (make deb), root, and debootstrap (make deb-deps)"),
          .timeLimit(.minutes(20)))
    func installsRunsAndPurgesCleanly() throws {
        let deb = try #require(Self.package, "CENARIUS_DEB is not set: make deb builds the package, .ci/run passes it")
        try #require(getuid() == 0, "chroot and debootstrap need root")
        try #require(FileManager.default.isExecutableFile(atPath: Self.debootstrap), "debootstrap is missing (make deb-deps)")
        let version = try Binary.run(["-f", deb, "Version"], executable: "/usr/bin/dpkg-deb").stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let clock = ContinuousClock()
        let start = clock.now
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let root = try DebianRoot(under: source.appendingPathComponent(".build-debootstrap").path)
        print(root.madeIn.map { "DebianPackageTests: debootstrap, man-db and systemd took \($0)" } ?? "DebianPackageTests: reusing \(root.path)")

        // A run killed halfway may have left the package in.
        try root.run("apt-get purge -y -qq --autoremove cenariusd >/dev/null 2>&1; true")
        let curl = "dpkg-query -W -f='${Status}' libcurl4 2>/dev/null; true"
        #expect(try root.run(curl).stdout != "install ok installed", "the root holds libcurl4 already: the install cannot show that Depends brings it")
        try? FileManager.default.removeItem(atPath: root.host("/tmp/cenariusd.deb"))
        try FileManager.default.copyItem(atPath: deb, toPath: root.host("/tmp/cenariusd.deb"))
        try root.run("apt-get update -qq && apt-get install -y -qq /tmp/cenariusd.deb", "apt-get install of the package")
        let listed = try root.run("dpkg -L cenariusd", "dpkg -L").stdout.split(separator: "\n").map(String.init).filter { $0 != "/." }
        let installedFiles = listed.filter { !Self.isDirectory(root.host($0)) }
        #expect(try root.run(curl).stdout == "install ok installed", "libcurl4, which the binary loads, did not come with the package")

        // It runs, with the libraries it loads at run time brought by its Depends: libcurl (a
        // file:// remote) and libzstd (routes --compress).
        // The package's version is the binary's, a pre-release's "-" made Debian's "~" (scripts/deb.sh).
        var printed = try root.run("cenariusd --version").stdout
        if let dash = printed.firstIndex(of: "-") { printed.replaceSubrange(dash...dash, with: "~") }
        #expect(printed == version + "\n")
        let help = try root.run("cenariusd --help")
        #expect(help.status == 0 && help.stdout.contains("USAGE: cenariusd"), "\(help.stderr)")
        try root.run("""
            set -e
            rm -rf /tmp/site /tmp/preset /tmp/cache && mkdir -p /tmp/site/js
            echo '<h1>hello</h1>' >/tmp/site/index.html && echo 'go()' >/tmp/site/js/app.js
            cenariusd routes /tmp/site --compress
            cenariusd sync --remote file:///tmp/site --preset /tmp/preset --cache /tmp/cache
            cenariusd resolve js/app.js --offline --remote file:///tmp/site --preset /tmp/preset --cache /tmp/cache
            """, "routes, sync and resolve in the root")
        #expect(try String(contentsOfFile: root.host("/etc/cenarius/config.json"), encoding: .utf8) == "{}\n")
        try root.run("cenariusd status --config /etc/cenarius/config.json --cache /tmp/cache >/dev/null", "status with the shipped configuration")

        // Its manual, as man finds and renders it.
        #expect(try root.run("man -w cenariusd", "man -w").stdout == "/usr/share/man/man1/cenariusd.1.gz\n")
        #expect(try root.run("man -w 5 cenarius-config").stdout == "/usr/share/man/man5/cenarius-config.5.gz\n")
        let rendered = try root.run("""
            for page in /usr/share/man/man1/cenariusd*.1.gz /usr/share/man/man5/cenarius-config.5.gz; do
              MANWIDTH=80 man --warnings -l "$page" >/dev/null || exit 1
            done
            """)
        #expect(rendered.status == 0 && rendered.stderr.isEmpty, "\(rendered.stderr)")

        // Bash completion, sourced as bash-completion would, and asked for a subcommand.
        let complete = try root.run("bash -c 'source /usr/share/bash-completion/completions/cenariusd && complete -p cenariusd'", "sourcing the bash completion")
        let function = try #require(complete.stdout.split(separator: " ").drop { $0 != "-F" }.dropFirst().first.map(String.init), "\(complete.stdout)")
        let words = try root.run("""
            bash -O extglob -c 'source /usr/share/bash-completion/completions/cenariusd
            COMP_WORDS=(cenariusd ro); COMP_CWORD=1; COMP_LINE="cenariusd ro"; COMP_POINT=${#COMP_LINE}
            \(function) cenariusd ro cenariusd; printf "%s\\n" "${COMPREPLY[@]}"'
            """)
        #expect(words.stdout.split(separator: "\n").contains("routes"), "completing 'cenariusd ro': \(words.stdout) \(words.stderr)")

        // The unit as systemd reads it (its commands, its man: documentation), installed, not enabled.
        let verify = try root.run("systemd-analyze verify /usr/lib/systemd/system/cenariusd.service")
        #expect(verify.status == 0 && verify.stderr.isEmpty, "systemd-analyze verify: \(verify.stdout)\(verify.stderr)")
        #expect(!FileManager.default.fileExists(atPath: root.host("/etc/systemd/system/multi-user.target.wants/cenariusd.service")))

        // Removed: the program goes, its configuration stays.
        try root.run("apt-get remove -y -qq cenariusd >/dev/null", "apt-get remove")
        #expect(!FileManager.default.fileExists(atPath: root.host("/usr/bin/cenariusd")))
        #expect(FileManager.default.fileExists(atPath: root.host("/etc/cenarius/config.json")))
        #expect(try root.run("dpkg-query -W -f='${Status}' cenariusd").stdout == "deinstall ok config-files")

        // Purged, after the administrator had enabled and run it: what systemd made goes too.
        try root.run("""
            set -e
            mkdir -p /var/cache/private/cenarius/objects && echo x >/var/cache/private/cenarius/objects/a
            ln -s private/cenarius /var/cache/cenarius
            mkdir -p /etc/systemd/system/multi-user.target.wants
            ln -s /usr/lib/systemd/system/cenariusd.service /etc/systemd/system/multi-user.target.wants/cenariusd.service
            """, "making what the enabled service would have made")
        try root.run("apt-get purge -y -qq --autoremove cenariusd >/dev/null", "apt-get purge")
        #expect(try root.run("dpkg -L cenariusd 2>&1").status != 0)
        for path in installedFiles {
            #expect(!FileManager.default.fileExists(atPath: root.host(path)), "\(path) is left after the purge")
        }
        for path in listed where FileManager.default.fileExists(atPath: root.host(path)) {
            let entries = (try? FileManager.default.contentsOfDirectory(atPath: root.host(path))) ?? []
            #expect(Self.isDirectory(root.host(path)) && !entries.isEmpty, "\(path) is left, empty, after the purge")
        }
        for path in ["/etc/cenarius", "/usr/share/doc/cenariusd", "/var/cache/cenarius", "/var/cache/private/cenarius",
                     "/etc/systemd/system/multi-user.target.wants/cenariusd.service"] {
            #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: root.host(path))) == nil
                    && !FileManager.default.fileExists(atPath: root.host(path)), "\(path) is left after the purge")
        }
        try? FileManager.default.removeItem(atPath: root.host("/tmp/cenariusd.deb"))
        print("DebianPackageTests: \(clock.now - start) in all")
    }

    private static func isDirectory(_ path: String) -> Bool {
        var directory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &directory) && directory.boolValue
    }
}

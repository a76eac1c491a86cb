import RouteSync
#if canImport(Glibc)
import Glibc
#endif

/// Runs a user's command line (`--health-cmd`, `--on-switch`) through `/bin/sh -c`, with extra
/// environment variables and a time limit. The command gets a process group of its own so that
/// a timeout kills everything it started, not only the shell.
struct ShellCommand: Sendable {
    enum Outcome: Sendable, Equatable {
        case exited(Int32)
        case signalled(Int32)
        case timedOut
        case notStarted(String)

        var succeeded: Bool { self == .exited(0) }

        var description: String {
            switch self {
            case .exited(let code): "exit status \(code)"
            case .signalled(let signal): "killed by signal \(signal)"
            case .timedOut: "did not finish in time (killed)"
            case .notStarted(let why): "could not start: \(why)"
            }
        }
    }

    let command: String
    let environment: [String: String]

    /// Blocking: call it off the cooperative pool.
    func run(timeout: Double) -> Outcome {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        posix_spawnattr_setpgroup(&attributes, 0)
        // The daemon blocks some signals for its own handling; the child starts with none blocked
        // and default dispositions.
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigdefault(&attributes, &all)

        var variables = [String: String]()
        var entry = environ
        while let pointer = entry.pointee {
            let text = String(cString: pointer)
            if let equals = text.firstIndex(of: "=") { variables[String(text[..<equals])] = String(text[text.index(after: equals)...]) }
            entry += 1
        }
        for (key, value) in environment { variables[key] = value }
        let arguments = ["/bin/sh", "-c", command]
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = variables.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid = pid_t()
        let spawned = posix_spawn(&pid, "/bin/sh", nil, &attributes, argv, envp)
        guard spawned == 0 else { return .notStarted(FileSystem.errnoText(spawned)) }

        let deadline = FileSystem.monotonic() + timeout
        var status: Int32 = 0
        while true {
            let waited = waitpid(pid, &status, WNOHANG)
            if waited == pid { break }
            if waited < 0 && errno != EINTR { return .notStarted(FileSystem.errnoText()) }
            if FileSystem.monotonic() >= deadline {
                kill(-pid, SIGKILL)
                _ = waitpid(pid, &status, 0)
                return .timedOut
            }
            usleep(20_000)
        }
        let signal = status & 0x7f
        if signal == 0 { return .exited((status >> 8) & 0xff) }
        return .signalled(signal)
    }
}

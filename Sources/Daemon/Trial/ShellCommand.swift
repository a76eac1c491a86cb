import Logging
import RouteSync
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Runs a user's command line (`--health-cmd`, `--on-switch`) through `/bin/sh -c`, with extra
/// environment variables and a time limit. The command gets a process group of its own so that
/// a timeout, a cancellation or the daemon's stop kills everything it started, not only the
/// shell; what it left running in its group when the shell exits is killed too (a hook's
/// processes never outlive it).
struct ShellCommand: Sendable {
    enum Outcome: Sendable, Equatable {
        case exited(Int32)
        case signalled(Int32)
        case timedOut
        case cancelled
        case notStarted(String)

        var succeeded: Bool { self == .exited(0) }

        var description: String {
            switch self {
            case .exited(let code): "exit status \(code)"
            case .signalled(let signal): "killed by signal \(signal)"
            case .timedOut: "did not finish in time (killed)"
            case .cancelled: "cancelled (killed)"
            case .notStarted(let why): "could not start: \(why)"
            }
        }
    }

    let command: String
    let environment: [String: String]

    /// Blocking: call it off the cooperative pool. `groups` kills it when the daemon stops.
    func run(timeout: Double, cancel: CancelToken? = nil, groups: ProcessGroups? = nil) -> Outcome {
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
        groups?.add(pid)
        defer {
            kill(-pid, SIGKILL)
            groups?.remove(pid)
        }

        let deadline = FileSystem.monotonic() + timeout
        var status: Int32 = 0
        while true {
            let waited = waitpid(pid, &status, WNOHANG)
            if waited == pid { break }
            if waited < 0 && errno != EINTR { return .notStarted(FileSystem.errnoText()) }
            let cancelled = cancel?.isCancelled == true || groups?.stopped == true
            if cancelled || FileSystem.monotonic() >= deadline {
                kill(-pid, SIGKILL)
                _ = waitpid(pid, &status, 0)
                return cancelled ? .cancelled : .timedOut
            }
            usleep(20_000)
        }
        let signal = status & 0x7f
        if signal == 0 { return .exited((status >> 8) & 0xff) }
        return .signalled(signal)
    }
}

/// The process groups of the commands running now, so that the daemon's stop kills them all,
/// with their children, instead of leaving them to outlive it.
final class ProcessGroups: Sendable {
    private let state = Mutex<(groups: Set<pid_t>, stopped: Bool)>(([], false))

    var stopped: Bool { state.withLock { $0.stopped } }

    func add(_ group: pid_t) {
        let stopped = state.withLock { state in
            state.groups.insert(group)
            return state.stopped
        }
        if stopped { kill(-group, SIGKILL) }
    }

    func remove(_ group: pid_t) {
        _ = state.withLock { $0.groups.remove(group) }
    }

    /// Kills every group now; commands started later are killed as they start.
    func killAll() {
        let groups = state.withLock { state in
            state.stopped = true
            return state.groups
        }
        for group in groups { kill(-group, SIGKILL) }
    }
}

/// Runs `--on-switch` commands in the background, each with its deadline: a switch never waits
/// for one, and a failure is logged and never undoes the switch.
struct HookRunner: Sendable {
    let logger: Logger
    let groups = ProcessGroups()

    /// `timeout`: `--hook-timeout`, as in force when the command starts.
    func run(_ command: ShellCommand, timeout: Double, label: String, metadata: Logger.Metadata) {
        let (groups, logger) = (groups, logger)
        Task {
            let outcome = await onThread("cenariusd-hook") { command.run(timeout: timeout, groups: groups) }
            if !outcome.succeeded {
                logger.warning("\(label) command failed (the switch stands)", metadata: metadata.merging(["outcome": "\(outcome.description)"]) { $1 })
            }
        }
    }
}

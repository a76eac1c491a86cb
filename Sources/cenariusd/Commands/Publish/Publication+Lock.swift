import Publishing
import RouteSync
import Settings
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Every command that writes a release holds the destination's publish lock from before it reads
/// what the destination holds to its last write (`PublishLock`): two publishes, or a publish and a
/// halt, that overlap run one after the other, and the second builds on the first's release.
enum PublishLocking {
    /// Runs `body` under the lock of `remote`, saying on stderr when it must wait for another publisher.
    static func run<T>(_ remote: any Destination, _ body: (any PublishLock) throws -> T) throws -> T {
        let lock = try remote.lock { Output.warn($0) }
        defer { lock.release() }
        TestPause.at("locked")
        return try body(lock)
    }

    /// The same, with `meanwhile` run while the lock is being taken, and `reread` run as soon as
    /// the lock is claimed (a store's lease settles for 0.25–1 s: both fit in it). `body` gets
    /// `meanwhile`'s result, or nil when it failed (`body` then does it again under the lock, where
    /// its failure counts), and `reread`'s from the claim that holds the lock.
    /// `discard` undoes what `meanwhile` left when the lock cannot be taken.
    static func run<T, S: Sendable, R>(_ remote: any Destination, meanwhile: () throws -> T, discard: (T) -> Void,
                                       reread: @escaping @Sendable () throws(CenariusError) -> S,
                                       _ body: (any PublishLock, T?, S) throws -> R) throws -> R {
        let latest = Latest<Result<S, CenariusError>>()
        let taking = Pending { () throws(CenariusError) in
            try remote.lock(waiting: { Output.warn($0) }, claimed: { latest.set(Result { () throws(CenariusError) in try reread() }) })
        }
        let early = try? meanwhile()
        let lock: any PublishLock
        do { lock = try taking.wait() } catch {
            early.map(discard)
            throw error
        }
        defer { lock.release() }
        TestPause.at("locked")
        guard let reading = latest.value else { throw CenariusError.internal("the publish lock was taken without a claim") }
        return try body(lock, early, try reading.get())
    }

    /// The same for a command that may be a dry run, which writes nothing and takes no lock.
    static func run<T>(_ remote: any Destination, dryRun: Bool, _ body: ((any PublishLock)?) throws -> T) throws -> T {
        if dryRun { return try body(nil) }
        return try run(remote) { try body($0) }
    }
}

/// The last value set, from any thread.
final class Latest<T: Sendable>: Sendable {
    private let stored = Mutex<T?>(nil)
    func set(_ value: T) { stored.withLock { $0 = value } }
    var value: T? { stored.withLock { $0 } }
}

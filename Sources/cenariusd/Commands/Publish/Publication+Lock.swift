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
    /// the lock is claimed (a store's lease settles for 0.25–1 s: both fit in it). `meanwhile` is given
    /// how many claims have been written so far (work it begins after claim k counts as done under
    /// the lock only if claim k is the one that holds it: `S3Destination.lock`). `body` gets
    /// `meanwhile`'s result, or nil when it failed (`body` then does it again under the lock, where
    /// its failure counts), `reread`'s from the claim that holds the lock, and that claim's number.
    /// `discard` undoes what `meanwhile` left when the lock cannot be taken.
    static func run<T, S: Sendable, R>(_ remote: any Destination, meanwhile: (_ claims: () -> Int) throws -> T, discard: (T) -> Void,
                                       reread: @escaping @Sendable () throws(CenariusError) -> S,
                                       _ body: (any PublishLock, T?, S, Int) throws -> R) throws -> R {
        let claims = Claims<S>()
        let taking = Pending { () throws(CenariusError) in
            try remote.lock(waiting: { Output.warn($0) }, claimed: { claims.claim(reread) })
        }
        let early = try? meanwhile { claims.latest.count }
        let lock: any PublishLock
        do { lock = try taking.wait() } catch {
            early.map(discard)
            throw error
        }
        defer { lock.release() }
        TestPause.at("locked")
        let (count, reading) = claims.latest
        guard let reading else { throw CenariusError.internal("the publish lock was taken without a claim") }
        return try body(lock, early, try reading.get(), count)
    }

    /// The same for a command that may be a dry run, which writes nothing and takes no lock.
    static func run<T>(_ remote: any Destination, dryRun: Bool, _ body: ((any PublishLock)?) throws -> T) throws -> T {
        if dryRun { return try body(nil) }
        return try run(remote) { try body($0) }
    }
}

/// A lock's claims as they are written, from any thread: how many, and what the last one's reread found.
final class Claims<S: Sendable>: Sendable {
    private let state = Mutex<(count: Int, read: Result<S, CenariusError>?)>((0, nil))

    /// Counts a claim before its reread runs, so that work begun from now on is known to follow it.
    func claim(_ reread: () throws(CenariusError) -> S) {
        state.withLock { $0 = ($0.count + 1, nil) }
        let read = Result { () throws(CenariusError) in try reread() }
        state.withLock { $0.read = read }
    }

    var latest: (count: Int, read: Result<S, CenariusError>?) { state.withLock { $0 } }
}

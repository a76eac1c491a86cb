#if canImport(Glibc)
import Glibc
#endif
import CCurl
import Dispatch
package import RouteSync
import Synchronization

extension S3Destination {
    /// A lease object, `.cenarius-publish.lock` under the prefix. Where the store has conditional
    /// writes (AWS S3, R2, MinIO: `If-None-Match: *` to create, `If-Match` to renew or take over an
    /// expired lease) taking it is one atomic request. Where it has not (OpenStack Swift's S3 API
    /// answers 501), a publisher writes its lease only after reading none that is live, waits
    /// `settle`, and holds the lock only if its own lease is still the one there. Of two that
    /// wrote, the later (B) overwrote the earlier's (A) lease after A read it back — B's read came
    /// before A's write, so B's read-then-write spans A's whole settle. A claim whose
    /// read-then-write took longer than `claimBound` (shorter than the longest settle) therefore
    /// waits past the holder's next renewal before it reads its lease back: an A that went on finds
    /// its lease gone there and stops before the Cenarius layout and the head. A shorter settle,
    /// and what keeps it safe: `S3Lease.settle`. A lease lasts
    /// `LockLease.seconds` and is renewed as the publish goes, so a killed publisher delays the
    /// next one by at most that.
    ///
    /// Store objects in the settle. Once a claim is written (`claimed`), `publish` writes its
    /// staged release's store objects without waiting for the claim to be confirmed: under
    /// `_cenarius/`, content-addressed, the same bytes whoever writes them, and named by nothing
    /// until the release record, the layout and the head, which it writes only under the lock,
    /// as it deletes only under it. Another publish meanwhile writes the same bytes or other names.
    /// A `prune` deletes only under the lock, only what its own listing (read once it holds the
    /// lock) shows that no kept release names. So an object X written in the settle of claim k:
    /// - if claim k loses, the holder may be a prune that lists X and deletes it: X does not count
    ///   as written — under the lock later the release is staged again on a fresh listing, or its
    ///   store phase runs whole (`Early.storeWritten` is kept only when claim k is the one that holds);
    /// - if claim k holds, no prune deletes X before the head names it: a prune that held the lock
    ///   before had deleted everything before its lease went (deleted after its last request), and
    ///   this claim read no live lease; one that claims later reads this lease and waits, or, when
    ///   the two claims raced, reads its own overwritten and holds nothing; and one whose slow claim
    ///   overwrote this lease after its settle waits a renewal period before it reads its own back
    ///   and lists — by then this publish has written its head (which names X), or its renewal found
    ///   the lease gone and it stopped before the layout and the head, leaving X unnamed, as a killed
    ///   publish leaves its objects. That last bound is the one every store object of a publish
    ///   already had; writing in the settle does not widen it.
    package func lock(waiting: (String) -> Void) throws(CenariusError) -> any PublishLock {
        try lock(waiting: waiting, claimed: {})
    }

    package func lock(waiting: (String) -> Void, claimed: () -> Void) throws(CenariusError) -> any PublishLock {
        let lease = S3Lease(destination: self)
        var told = false
        while true {
            let mine = LockHolder.mine(lease: LockLease.seconds)
            if try lease.take(mine, claimed: claimed) { return S3Lock(lease: lease, holder: mine) }
            if !told, let current = try lease.current() {
                waiting("waiting for \(current.holder?.description ?? "another publish") to finish with \(description)")
                told = true
            }
            usleep(500_000)
        }
    }
}

/// The lease object's requests.
struct S3Lease: Sendable {
    let destination: S3Destination
    /// How long a publisher without conditional writes waits before reading its lease back, and
    /// the longest read-then-write (from asking for the lease to the answer of writing one) after
    /// which that is enough: any claim that overwrote this one's after the settle took longer.
    /// The settle is four times this claim's own read-then-write, between 0.25 s and 1 s: a claim
    /// that overwrote this one after a shorter settle took four times as long against the same
    /// store and did not see itself as slow (under `claimBound`). The holder then still reads its
    /// lease again before the layout and before the head (`confirm`, through `PlanRunner.Guard`),
    /// and stops there if it is gone; a head written before the other's lease landed is the one
    /// the other's reread finds, and one written after it is caught by the other's own Guard (the
    /// head it read has changed). So the short settle costs at most a layout both wrote in that
    /// race, which the next publish puts right, as after a kill — never a head moved back.
    /// (1 s before 2026-11-28: the floor of every publish to such a store.)
    static let settle = (least: 0.25, most: 1.0, times: 4.0)
    static let claimBound = 0.9

    /// The settle after a read-then-write of `took` seconds.
    static func settle(after took: Double) -> Double {
        min(settle.most, max(settle.least, settle.times * took))
    }

    struct Current {
        /// nil: an object this version cannot read (held until it is old).
        var holder: LockHolder?
        var etag: String?
        var modified: Double?
        var live: Bool {
            guard let holder else { return (modified ?? 0) + LockLease.seconds > FileSystem.now() }
            // A publisher of this machine that is gone (killed) holds nothing: no need to wait out its lease.
            if holder.isOnThisHost, kill(holder.pid, 0) != 0, errno == ESRCH { return false }
            return holder.until > FileSystem.now()
        }
    }

    /// The lease there now, if any.
    func current() throws(CenariusError) -> Current? {
        var found: Current?
        let request = S3Request(method: "GET", url: destination.address.url(LockHolder.key), limit: 4096, tag: LockHolder.key)
        try destination.client.perform([request]) { _, response throws(CenariusError) in
            switch response.status {
            case 200:
                found = Current(holder: LockHolder.parse(response.body), etag: response.headers["etag"],
                                modified: response.headers["last-modified"].map { Double(ccurl_getdate($0)) })
            case 404: found = nil
            default: throw destination.failure("cannot read \(destination.description)\(LockHolder.key)", response)
            }
        }
        return found
    }

    /// Takes the lock for `mine` if nobody holds it live; false when somebody does. `claimed` runs
    /// once the lease is written: on a store without conditional writes, within the settle.
    func take(_ mine: LockHolder, claimed: () -> Void = {}) throws(CenariusError) -> Bool {
        let existing = try current()
        if let existing, existing.live { return false }
        // Create it, or replace the expired one, on the condition that nobody did first.
        let condition = existing?.etag.map { "If-Match: \($0)" } ?? "If-None-Match: *"
        switch try put(mine, condition: condition) {
        case 200:
            claimed()
            return true
        case 412, 409: return false
        default:
            // No conditional writes here: write, let every other writer's read-then-write land, read back.
            // The read-then-write that counts is a read right before the write (not the refused attempt's).
            let asked = FileSystem.monotonic()
            if let again = try current(), again.live { return false }
            TestPause.at("lease-write")
            guard try put(mine, condition: nil) == 200 else { return false }
            // A slow claim first waits out the renewal of a holder it may have overwritten.
            let took = FileSystem.monotonic() - asked
            if took > Self.claimBound { usleep(useconds_t(LockLease.renewEvery * 1_000_000)) }
            let written = FileSystem.monotonic()
            TestPause.trace("lease-written")
            // Whoever held the lock before had finished writing when its lease went (it is deleted
            // after the last write), and nobody writes after this lease unless it is read back as
            // theirs: the remote read from now on is what the holder will find.
            claimed()
            TestPause.at("lease-settle")
            let left = Self.settle(after: took) - (FileSystem.monotonic() - written)
            if left > 0 { usleep(useconds_t(left * 1_000_000)) }
            let held = try current()?.holder?.token == mine.token
            TestPause.trace(held ? "lease-confirmed" : "lease-lost")
            return held
        }
    }

    /// The status of a PUT of `holder`'s lease; 2xx as 200, and the statuses a store answers a
    /// condition it does not support with (501, 400 NotImplemented) as 501.
    func put(_ holder: LockHolder, condition: String?) throws(CenariusError) -> Int {
        var status = 0
        let request = S3Request(method: "PUT", url: destination.address.url(LockHolder.key),
                                headers: ["Content-Type: text/plain", "Cache-Control: no-store"] + (condition.map { [$0] } ?? []),
                                body: holder.serialized(), limit: 64 << 10, tag: LockHolder.key)
        try destination.client.perform([request]) { _, response throws(CenariusError) in
            switch response.status {
            case 200, 201, 204: status = 200
            case 412, 409: status = response.status
            case 501: status = 501
            case 400 where condition != nil && response.errorText.contains("NotImplemented"): status = 501
            default: throw destination.failure("cannot write \(destination.description)\(LockHolder.key)", response)
            }
        }
        return status
    }

    func delete() {
        let request = S3Request(method: "DELETE", url: destination.address.url(LockHolder.key), limit: 64 << 10, tag: LockHolder.key)
        try? destination.client.perform([request]) { _, _ in }
    }
}

/// A held lease, renewed by a thread of its own every `LockLease.renewEvery` for as long as it is
/// held (a single upload may outlast the lease), and deleted at the end if it is still this holder's.
final class S3Lock: PublishLock {
    struct State {
        var holder: LockHolder
        var released = false
        /// Why the lease was lost (another publisher took it over): the publish stops before its head.
        var lost: CenariusError?
    }

    let lease: S3Lease
    let state: Mutex<State>

    init(lease: S3Lease, holder: LockHolder) {
        self.lease = lease
        state = Mutex(State(holder: holder))
        DispatchQueue.global().async { [self] in keepRenewing() }
    }

    private func keepRenewing() {
        var last = FileSystem.monotonic()
        while true {
            usleep(200_000)
            guard !state.withLock({ $0.released || $0.lost != nil }) else { return }
            guard FileSystem.monotonic() - last >= LockLease.renewEvery else { continue }
            last = FileSystem.monotonic()
            // A store that fails to answer once is asked again at the next turn; only a lease another holds is lost.
            guard (try? renewNow()) != false else {
                // Whether it was written over or ran out first, another holds the lock now: the same
                // stop as `confirm`'s, and the same wait and publish on top of it (PublishCommand).
                state.withLock { $0.lost = lost() }
                return
            }
        }
    }

    /// False when the lease there is another holder's.
    private func renewNow() throws(CenariusError) -> Bool {
        var holder = state.withLock { $0.holder }
        let current = try lease.current()
        guard current?.holder?.token == holder.token else { return false }
        holder.until = FileSystem.now() + LockLease.seconds
        if try lease.put(holder, condition: current?.etag.map { "If-Match: \($0)" }) == 501 { _ = try lease.put(holder, condition: nil) }
        state.withLock { $0.holder = holder }
        return true
    }

    func renew() throws(CenariusError) {
        if let lost = state.withLock({ $0.lost }) { throw lost }
    }

    func confirm() throws(CenariusError) {
        try renew()
        let token = state.withLock { $0.holder.token }
        guard try lease.current()?.holder?.token == token else {
            let error = lost()
            state.withLock { $0.lost = error }
            throw error
        }
    }

    /// Another publish's lease is where this one's was: it stops before the next write that names a release.
    private func lost() -> CenariusError {
        CenariusError(.remote, "\(lease.destination.description)\(LockHolder.key): another publish took this one's lock "
            + "(its lease was written over, or ran out unrenewed): stopped before the next write that names a release; run it again", cause: .lockTaken)
    }

    func release() {
        let token = state.withLock { state in
            state.released = true
            return state.holder.token
        }
        guard (try? lease.current())?.holder?.token == token else { return }
        lease.delete()
    }
}

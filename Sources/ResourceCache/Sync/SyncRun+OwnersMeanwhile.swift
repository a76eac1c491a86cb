import Dispatch
import RouteSync
import Synchronization
import Transport

/// The others' shares asked of their owners while this device fetches its own share from the
/// origin (docs/peers.md), each owner's on a thread of its own: the LAN's transfers and their
/// decoding overlap the uplink's, where they used to wait for the device's own share to be in, and
/// an owner whose forms are ready is asked again at once rather than once a round of every owner's
/// transfers has ended (B11). The owners answer "not yet" for what they are still fetching, and
/// each is asked again every quarter second.
final class OwnersMeanwhile: @unchecked Sendable {
    /// What the asking left for the origin, what it counted, and the forms it learned owners lack.
    struct Outcome {
        var left: [RouteEntry]
        var report = SyncReport(outcome: .committed, generation: nil)
        var forms: PeerFormAsk?
        var error: CenariusError?
    }

    /// One owner's asking: written by its thread only, read only after `running` is waited for.
    private final class Asking: @unchecked Sendable {
        var outcome: Outcome
        init(_ outcome: Outcome) { self.outcome = outcome }
    }

    private let running = DispatchGroup()
    private let askings: [Asking]
    /// What every owner gave, adopted into the store at once when the asking ends: one syncfs for
    /// all of them (ObjectStore.adoptAll), where each owner's every round of asking had one (on B11's
    /// eight devices about forty a release, each waiting for whatever the device had written; a
    /// syncfs is a flush of the device's storage). A file of theirs is counted when it checks out,
    /// and served to peers as a kept form (PeerForms) before it has its name.
    private let verified = VerifiedFiles()
    private let handoff: Handoff
    /// Until this device's own share is in, a peer's `404` or refused connection is "not yet" (its
    /// peers, started with it, may not have begun): after that it means what it says, as when the
    /// owners were asked only once the share was in.
    private let ownShareIn = Atomic<Bool>(false)

    init(_ run: SyncRun, entries: [RouteEntry], owners: PeerShares, forms: PeerFormAsk?, in fetch: ObjectFetch) {
        let peers = run.usablePeers
        let lanes = Self.lanes(Dictionary(grouping: entries) { owners.owner(of: $0.hash).flatMap { peers.contains($0) ? $0 : nil } ?? "" })
        askings = lanes.map { Asking(Outcome(left: $0.entries, forms: forms)) }
        // The progress is the sync's own thread's to report: these downloads are counted in the report.
        handoff = Handoff(run: run, fetch: ObjectFetch(offer: fetch.offer, index: fetch.index, objects: fetch.objects, held: fetch.held, progress: nil))
        guard !peers.isEmpty else { return }
        for (owner, asking) in zip(lanes.map(\.owner), askings) where !owner.isEmpty {
            DispatchQueue(label: "cenariusd.owners-meanwhile").async(group: running) { [self] in
                let entries = asking.outcome.left
                var forms = asking.outcome.forms
                do throws(CenariusError) {
                    let how = SyncRun.PeerAsking(waiting: true, owner: owner, patient: { !self.ownShareIn.load(ordering: .relaxed) }, adoptLater: verified)
                    asking.outcome.left = try handoff.run.fromPeersTraced(entries, how, forms: &forms, in: handoff.fetch, report: &asking.outcome.report)
                } catch {
                    asking.outcome.error = error
                }
                asking.outcome.forms = forms
            }
        }
    }

    /// Each owner's objects on two threads, each on one connection to it: its largest, the longest
    /// on the uplink, taken as it arrives there, and the rest one after another, smallest first, each
    /// whole there or arriving by the time it is asked for (the owner fetches its share in that
    /// order: ShareOrder). On one connection the largest held the rest back until it was in.
    static func lanes(_ owners: [String: [RouteEntry]]) -> [(owner: String, entries: [RouteEntry])] {
        owners.flatMap { owner, entries -> [(owner: String, entries: [RouteEntry])] in
            guard !owner.isEmpty, entries.count > 1, let largest = ShareOrder.indices(entries.map(\.size)).first,
                  entries[largest].size != nil else { return [(owner, entries)] }
            var rest = entries
            let alone = rest.remove(at: largest)
            return [(owner, [alone]), (owner, rest)]
        }
    }

    /// The sync's run, for the asking threads: what they use of it (the settings, the cache, the
    /// cancel token) is shared by design, and the sync's thread waits for them before going on.
    private struct Handoff: @unchecked Sendable {
        let run: SyncRun
        let fetch: ObjectFetch
    }

    /// Once the asking has ended: what is left of the entries (for the origin), its counts added to
    /// `report`, and `forms` with what every owner said it lacks.
    func finish(into report: inout SyncReport, forms: inout PeerFormAsk?) throws(CenariusError) -> [RouteEntry] {
        ownShareIn.store(true, ordering: .relaxed)
        running.wait()
        var left: [RouteEntry] = []
        for asking in askings {
            report.add(peers: asking.outcome.report)
            left += asking.outcome.left
            if let lacked = asking.outcome.forms?.filesOnly { forms?.filesOnly.formUnion(lacked) }
        }
        try handoff.fetch.objects.adoptAll(verified.take(), in: handoff.run.cache)
        if let error = askings.lazy.compactMap(\.outcome.error).first { throw error }
        return left
    }
}

extension SyncReport {
    /// What asking peers on another thread counted.
    mutating func add(peers other: SyncReport) {
        downloadedFiles += other.downloadedFiles
        downloadedBytes += other.downloadedBytes
        bytesHeld += other.bytesHeld
        bytesFetched += other.bytesFetched
        bytesFromPeers += other.bytesFromPeers
        patchedFiles += other.patchedFiles
        compressedFiles += other.compressedFiles
    }
}

import Dispatch
import RouteSync
import Synchronization

/// The others' shares asked of their owners on a thread of their own while this device fetches
/// its own share from the origin (docs/peers.md): the LAN's transfers and their decoding overlap
/// the uplink's, where they used to wait for the device's own share to be in (B11). The owners
/// answer "not yet" for what they are still fetching, and the asker asks again every quarter second.
final class OwnersMeanwhile: @unchecked Sendable {
    /// What the asking left for the origin, what it counted, and the forms it learned owners lack.
    struct Outcome {
        var left: [RouteEntry]
        var report = SyncReport(outcome: .committed, generation: nil)
        var forms: PeerFormAsk?
        var error: CenariusError?
    }

    private let running = DispatchGroup()
    /// Until this device's own share is in, a peer's `404` or refused connection is "not yet" (its
    /// peers, started with it, may not have begun): after that it means what it says, as when the
    /// owners were asked only once the share was in.
    private let ownShareIn = Atomic<Bool>(false)
    /// Written by the asking thread only, read only after `running` is waited for.
    private var outcome: Outcome

    init(_ run: SyncRun, entries: [RouteEntry], forms: PeerFormAsk?, in fetch: ObjectFetch) {
        outcome = Outcome(left: entries, forms: forms)
        guard !entries.isEmpty else { return }
        // The progress is the sync's own thread's to report: this one's downloads are counted in the report.
        let handoff = Handoff(run: run, fetch: ObjectFetch(offer: fetch.offer, index: fetch.index, objects: fetch.objects, held: fetch.held, progress: nil))
        DispatchQueue(label: "cenariusd.owners-meanwhile").async(group: running) { [self] in
            var forms = outcome.forms
            do throws(CenariusError) {
                outcome.left = try handoff.run.fromPeersTraced(entries, waiting: true, patient: { !self.ownShareIn.load(ordering: .relaxed) }, forms: &forms, in: handoff.fetch, report: &outcome.report)
            } catch {
                outcome.error = error
            }
            outcome.forms = forms
        }
    }

    /// The sync's run, for the asking thread: what it uses of it (the settings, the cache, the
    /// cancel token) is shared by design, and the sync's thread waits for it before going on.
    private struct Handoff: @unchecked Sendable {
        let run: SyncRun
        let fetch: ObjectFetch
    }

    /// Once the asking has ended: what is left of the entries (for the origin), its counts added to `report`.
    func finish(into report: inout SyncReport) throws(CenariusError) -> (left: [RouteEntry], forms: PeerFormAsk?) {
        ownShareIn.store(true, ordering: .relaxed)
        running.wait()
        report.add(peers: outcome.report)
        if let error = outcome.error { throw error }
        return (outcome.left, outcome.forms)
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

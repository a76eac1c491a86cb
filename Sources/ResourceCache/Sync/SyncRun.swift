import RouteSync
import Transport

/// One sync from one remote, from the poll to the switch, in three steps — `offer`, `stage`,
/// `switchTo` — each of which may end it. Built once under the writer lock with what every step
/// works with: the remote and its mirrors, the opened cache, the downloader, the cancel token, the
/// progress callback and the clock (OSTree's `OtPullData` is the same idea for a pull), so a step
/// takes only what is its own to decide. What the device holds is read once, by the offer (`Poll`).
/// Every change a step makes to the cache is told first (`SyncEffect`), and every signature,
/// version and expiry passes the one gate (`ReleaseGate`).
struct SyncRun {
    let syncer: Syncer
    let remote: Remote
    /// Tried in order for a file the remote cannot give (G7's mirrors).
    let mirrors: [Remote]
    let cache: OpenedCache
    let downloader: Downloader
    /// When the sync began (monotonic seconds): every report's `seconds`.
    let started: Double
    let cancel: CancelToken?
    let progress: ((TransferProgress) -> Void)?
    /// How the table was had from this remote, for what a failure leads to.
    var attempt = TableAttempt()

    var settings: SyncSettings { syncer.settings }
    var layout: CacheLayout { syncer.layout }
    var isCancelled: Bool { cancel?.isCancelled ?? false }
    var gate: ReleaseGate { syncer.gate }
    var heads: HeadStore { syncer.heads }
    func effect(_ effect: SyncEffect) { syncer.effect(effect) }

    /// The three steps; their order is the crash-safety contract: nothing the offer reads is
    /// written before the release is checked, nothing is current before every file is verified in
    /// the store, and the switch is one rename under the holds' lock (G1, G3, G10).
    mutating func run() throws(CenariusError) -> SyncReport {
        let offer: Offer
        switch try Traced.span("cenarius.offer", { _ throws(CenariusError) in try self.offer() }) {
        case .ended(let report): return report
        case .offered(let offered): offer = offered
        }
        attempt.pastTable = true
        switch try Traced.span("cenarius.stage", { _ throws(CenariusError) in try stage(offer) }) {
        case .held(let report): return report
        case .staged(let staged): return try Traced.span("cenarius.switch") { _ throws(CenariusError) in try switchTo(staged) }
        }
    }
}

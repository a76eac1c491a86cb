import RouteSync
import Transport

/// One release's objects being fetched, as every source of them takes it (peers, the origin's
/// forms, a carried pack, plain files): the offer and its release index (which forms there are),
/// the store they go into, the copies this device holds already (the bases of patches), and who
/// hears the progress.
struct ObjectFetch {
    let offer: Offer
    let index: ReleaseIndex?
    let objects: ObjectStore
    let held: @Sendable (ContentHash) -> String?
    let progress: ((TransferProgress) -> Void)?

    /// What each file's form weighs, as the index says (PeerShares).
    var formBytes: [ContentHash: Int64] { index?.formBytes(for: offer.table) ?? [:] }
}

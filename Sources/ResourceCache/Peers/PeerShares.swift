package import RouteSync

/// Which device of the LAN fetches each object of a release from the origin for the others (its
/// owner, docs/peers.md): rendezvous hashing (PeerChoice) bounded by bytes. The objects are taken
/// largest first, each to the first device of its rendezvous ranking whose share stays within
/// `slack` times an even share of the bytes, else to the device with the least so far.
///
/// Why bounded (B11): by rendezvous alone each device owns about as many objects as the others,
/// but a site's bytes sit in a few large files: streamlit's first install gave one of eight devices
/// 2.05 MB of the 6.5 MB of forms (and 0.41 of a release's 0.80 MB of patches), which it then
/// served seven times over through its rate cap while the others idled, and every device waited
/// for it. The bytes are those of the forms the index names (`ReleaseIndex.formBytes`: a release's
/// patches are a few percent of their files, a picture's form about the picture), the file's
/// signed size where it names none (an index from before they were published). Every device that
/// fetches the same objects with the same peers reckons the same shares (pure: the index, the
/// table's signed sizes and the peers' names); one that fetches another set (it was on
/// another release) may reckon some objects another device's, which costs those objects a `404`
/// and a fetch from the origin, as any owner that lacks an object does.
package struct PeerShares: Sendable {
    /// How far past an even share of the bytes a device's share may go before an object goes to the
    /// next device of its ranking: close to even, while most objects stay with their first choice.
    package static let slack = 1.1

    private let owners: [ContentHash: String]

    /// `entries`: the objects to fetch (a sync's downloads, one entry per hash); `peers`: every
    /// device that shares them, this one among them as they name it; `bytes`: what each object's
    /// form weighs, where the index says.
    package init(_ entries: [RouteEntry], among peers: [String], bytes: [ContentHash: Int64] = [:]) {
        guard !peers.isEmpty else {
            owners = [:]
            return
        }
        var seen = Set<ContentHash>()
        let objects = entries.filter { seen.insert($0.hash).inserted }
            .map { (hash: $0.hash, bytes: Double(max(bytes[$0.hash] ?? $0.size ?? 1, 1))) }
            .sorted { ($0.bytes, $1.hash.hex) > ($1.bytes, $0.hash.hex) }
        let bound = Self.slack * objects.reduce(0) { $0 + $1.bytes } / Double(peers.count)
        // A peer named twice (a `--peer` repeated, or found by DNS-SD too) is one device.
        var load = [String: Double](peers.map { ($0, 0) }) { first, _ in first }
        var owners: [ContentHash: String] = [:]
        for object in objects {
            let ranked = PeerChoice.ranked(object.hash.hex, among: peers)
            let owner = ranked.first { load[$0]! + object.bytes <= bound } ?? ranked.min { load[$0]! < load[$1]! }!
            load[owner]! += object.bytes
            owners[object.hash] = owner
        }
        self.owners = owners
    }

    /// The device that fetches `hash` from the origin; nil for an object not among the entries.
    package func owner(of hash: ContentHash) -> String? { owners[hash] }
}

import RouteSync
import Transport

/// The pack a head names, started as soon as the head is read (B8 v2): it comes in over
/// connections of its own while the table or its patch takes its round trip and the release is
/// checked, so that a release is the head's round trip and one more. Only where the device is
/// sure to want it, since a pack that nobody takes is bytes for nothing: no install policy, no
/// hold, no release waiting, and a release every device takes (no rollout, no native version).
/// What the sync then wants is still decided by the index the table's signature covers; a pack
/// fetched for nothing is stopped and removed with the sync.
extension SyncRun {
    /// A first install opens its pack's connections beside its first request for the head: once
    /// in a device's life, when it holds nothing (no generation, no preset table) and so will
    /// want the solid pack.
    func warmForPack(_ poll: Poll, state: HeadState) {
        guard poll.current == nil, state.text == nil, !state.absent, mayPrefetch(poll), presetTableDigest() == nil else { return }
        downloader.warmForPrefetch(poll.remote.headURL, cancel: cancel)
    }

    /// Starts the pack `head` names for a device on the table `current` (SHA-256), or without
    /// a table (a first install: the solid pack).
    func prefetchPack(_ head: ReleaseHead, current: String?, poll: Poll) {
        guard mayPrefetch(poll) else { return }
        if let release = head.release {
            guard let manifest = try? ReleaseManifest.parse(release, source: poll.remote.headURL),
                  manifest.rollout == nil, manifest.requiresNative == nil else { return }
        }
        let held = current ?? presetTableDigest()
        let hint = held.map { held in head.tablePatches.first { $0.from == held }?.pack } ?? head.solidPack ?? head.carriedPack
        // A small pack comes as fast on the connection the sync has open, after the table.
        guard let hint, hint.size >= SlicedDownload.minSliced, hint.size <= settings.transfer.maxFileSize else { return }
        downloader.prefetch(FormFetcher.packJob(remote: poll.remote, temporary: layout.tmp, hint.hash, size: hint.size,
                                                policy: FormPolicy().packs(settings.transfer)), cancel: cancel)
    }

    /// Not with peers to ask first: a pack from the origin started beside them is the uplink's
    /// bytes the peers are there to save.
    private func mayPrefetch(_ poll: Poll) -> Bool {
        settings.peers.health.usable(settings.peers.urls, now: FileSystem.monotonic()).isEmpty && Zstd.isAvailable && settings.install.isDefault && poll.pending == nil && HoldStore(layout: layout).active().isEmpty
    }

    /// The preset's table, which a device without a generation starts from (FormPlan.Held).
    private func presetTableDigest() -> String? {
        (try? FileSystem.readFile(settings.preset.tablePath, limit: RouteTable.maxBytes)).map(ReleaseIndex.tableDigest)
    }
}

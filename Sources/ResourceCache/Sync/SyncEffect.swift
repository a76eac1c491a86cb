/// A change a sync makes to the cache, named in the order a sync makes them. That order is the
/// crash-safety contract (G1, G3): nothing is current before every file is verified in the store
/// and the generation is built, and what is recorded after the switch is only bookkeeping.
/// `SyncEffectsTests` pins the order for every outcome; `CrashBetweenEffectsTests` kills the built
/// binary just before each effect and finds the cache whole and the next sync complete.
package enum SyncEffect: String, Sendable, CaseIterable {
    /// The `attempted` stamp (throttles lookup refreshes).
    case attempted
    /// `last-poll.json`: the origin's answer, for `why`.
    case lastPoll
    /// `head.json`: the head's validators and text, or that the remote has none.
    case headState
    /// `table-form`: whether the remote publishes a compressed table.
    case tableFormMarker
    /// The generation in force's `meta.json`: new validators, a later signature.
    case metaRefreshed
    /// `trust.json`: keys rotated in or retired.
    case trust
    /// `release.json`: a refused table counted as given up.
    case failedRelease
    /// `pending/`: a release waiting for its moment or a window.
    case pending
    /// `pending/` cleared: the release in force or just switched to is no longer waiting.
    case pendingCleared
    /// Generations and objects collected to make room before a download.
    case roomMade
    /// Preset files copied into the object store.
    case imports
    /// Files fetched (decoded from forms, or plain) adopted into the object store.
    case downloads
    /// `generations/<n>.building` assembled.
    case generationBuilt
    /// `current` renamed to the new generation: the switch.
    case committed
    /// `release.json`: the table held back let go (another release is current).
    case heldBackCleared
    /// The `checked` stamp: the remote answered.
    case checked
    /// Old generations and unreferenced objects collected after the switch.
    case garbageCollected
    /// `last-sync.json`: how the sync ended, for `why`.
    case lastSync
}

/// Told of each effect just before it is made: tests record them, and the test hook
/// `CENARIUS_TEST_KILL_BEFORE=<effect>` stops the process there with SIGKILL (docs/testing.md).
package struct SyncEffects: Sendable {
    package let before: @Sendable (SyncEffect) -> Void

    package init(before: @escaping @Sendable (SyncEffect) -> Void) {
        self.before = before
    }
}

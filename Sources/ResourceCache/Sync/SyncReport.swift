import RouteSync

/// What one sync did; printed by `sync`, returned in daemon receipts, counted in metrics.
public struct SyncReport: Sendable, Codable, Equatable {
    public enum Outcome: String, Sendable, Codable {
        /// The origin answered 304: nothing else was done.
        case notModified = "not-modified"
        /// The table came back byte-identical to the one in force.
        case unchanged
        /// A new generation is current.
        case committed
        /// The remote still publishes the table an operator rolled back from; it is not applied again.
        case heldBack = "held-back"
        /// A new release is published, but this device does not adopt it yet (G10): see `deferred`.
        case deferred
        /// A new release was downloaded but not switched to while a hold is active (G10).
        case held
    }

    /// Why a release was not adopted, and until when.
    public struct Deferral: Sendable, Codable, Equatable {
        public var release: String
        /// `time`, `halted`, `compatibility` or `hold`.
        public var reason: String
        public var detail: String
        public var place: Double?
        /// When this device adopts (unix seconds), for `time`.
        public var at: Double?
    }

    public var outcome: Outcome
    public var generation: Int?
    public var entries = 0
    public var downloadedFiles = 0
    public var downloadedBytes: Int64 = 0
    public var importedFromPreset = 0
    public var reusedObjects = 0
    public var servedFromPreset = 0
    public var removedGenerations = 0
    public var removedObjects = 0
    public var seconds = 0.0
    public var deferred: Deferral?

    public init(outcome: Outcome, generation: Int?) {
        self.outcome = outcome
        self.generation = generation
    }
}

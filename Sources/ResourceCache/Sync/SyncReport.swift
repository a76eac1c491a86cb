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

    public init(outcome: Outcome, generation: Int?) {
        self.outcome = outcome
        self.generation = generation
    }
}

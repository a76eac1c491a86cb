import RouteSync

/// What one sync did; printed by `sync`, returned in daemon receipts, counted in metrics.
package struct SyncReport: Sendable, Codable, Equatable {
    package enum Outcome: String, Sendable, Codable {
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
    package struct Deferral: Sendable, Codable, Equatable {
        package var release: String
        /// `time`, `halted`, `compatibility` or `hold`.
        package var reason: String
        package var detail: String
        package var place: Double?
        /// When this device adopts (unix seconds), for `time`.
        package var at: Double?
    }

    package var outcome: Outcome
    package var generation: Int?
    package var entries = 0
    package var downloadedFiles = 0
    package var downloadedBytes: Int64 = 0
    /// Bytes on the wire for the files (plain, compressed forms, patches, packs), and the bytes
    /// the files they gave hold (B8): the saving is the difference.
    package var bytesFetched: Int64 = 0
    package var bytesHeld: Int64 = 0
    /// Of the files' bytes, those LAN peers gave (docs/peers.md); the rest of `bytesFetched` came
    /// from the origin and its mirrors.
    package var bytesFromPeers: Int64 = 0
    package var bytesFromOrigin: Int64 = 0
    /// Files decoded from a patch, and from a compressed form or a pack.
    package var patchedFiles = 0
    package var compressedFiles = 0
    /// Forms that failed and left their file to its next source.
    package var formFallbacks = 0
    package var importedFromPreset = 0
    package var reusedObjects = 0
    package var servedFromPreset = 0
    package var removedGenerations = 0
    package var removedObjects = 0
    package var seconds = 0.0
    package var deferred: Deferral?
    /// An import's bundle and the report it left beside it (docs/bundles.md).
    package var imported: Imported?

    package struct Imported: Sendable, Codable, Equatable {
        /// The bundle as it was given.
        package var bundle: String
        /// The report file written beside it; nil when it could not be (see `reportProblem`) or `--no-report`.
        package var report: String?
        package var reportProblem: String?
        package init(bundle: String, report: String? = nil, reportProblem: String? = nil) {
            self.bundle = bundle
            self.report = report
            self.reportProblem = reportProblem
        }
    }

    package init(outcome: Outcome, generation: Int?) {
        self.outcome = outcome
        self.generation = generation
    }
}

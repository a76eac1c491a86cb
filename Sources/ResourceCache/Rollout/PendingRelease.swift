package import RouteSync
package import Transport

/// A release the remote publishes that this device has not adopted yet (G10), kept in the cache
/// so that later polls ask for it conditionally instead of downloading the table again, and
/// so that `status` can say what it waits for.
///
///     pending/Routes.json    the table's exact bytes
///     pending/release        the manifest's exact bytes
///     pending/state.json     this record
package struct PendingRelease: Sendable, Codable, Equatable {
    package var remote: String
    /// The manifest's `release`, or the table's fingerprint when it has none.
    package var release: String
    package var tableValidators: Validators
    package var manifestValidators: Validators?
    /// `time`, `halted`, `compatibility` or `hold`.
    package var reason: String
    package var detail: String
    /// This device's place in [0, 1) and the moment it adopts (unix seconds), for a staged rollout.
    package var place: Double?
    package var moment: Double?
    /// When this device first saw the release, and when it last looked again.
    package var seenAt: Double
    package var checkedAt: Double

    package init(remote: String, release: String, tableValidators: Validators, manifestValidators: Validators?, reason: String,
                detail: String, place: Double?, moment: Double?, seenAt: Double, checkedAt: Double) {
        self.remote = remote
        self.release = release
        self.tableValidators = tableValidators
        self.manifestValidators = manifestValidators
        self.reason = reason
        self.detail = detail
        self.place = place
        self.moment = moment
        self.seenAt = seenAt
        self.checkedAt = checkedAt
    }
}

/// Reads and writes `pending/` under the writer lock (syncs), and without a lock for `status`.
package struct PendingStore: Sendable {
    package let layout: CacheLayout

    package init(layout: CacheLayout) {
        self.layout = layout
    }

    var folder: String { layout.pending }

    package func read() -> (record: PendingRelease, table: [UInt8], manifest: [UInt8]?)? {
        guard let record = JSONFile.read(PendingRelease.self, folder + "/state.json"),
              let table = try? FileSystem.readFile(folder + "/Routes.json") else { return nil }
        return (record, table, try? FileSystem.readFile(folder + "/release", limit: 1 << 20))
    }

    /// The record alone (status).
    package func record() -> PendingRelease? { read()?.record }

    package func write(_ record: PendingRelease, table: [UInt8], manifest: [UInt8]?) throws(CenariusError) {
        // Made, or repaired, by descriptor: a link planted at pending/ is removed, never written through (G5).
        guard try CacheFolder.root(layout.root)?.folder("pending") != nil else { throw .storage("cannot create directory \(folder)") }
        try FileSystem.writeAtomically(table, to: folder + "/Routes.json", durable: false)
        if let manifest {
            try FileSystem.writeAtomically(manifest, to: folder + "/release", durable: false)
        } else {
            FileSystem.removeTree(folder + "/release")
        }
        // The record last: a crash before it leaves the previous record or none, never one that
        // describes bytes not written.
        try JSONFile.write(record, to: folder + "/state.json", durable: false)
    }

    /// Whether there is anything to clear.
    package var isEmpty: Bool { !FileSystem.exists(folder) }

    package func clear() {
        FileSystem.removeTree(folder)
    }
}

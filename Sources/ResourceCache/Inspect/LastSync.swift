package import RouteSync

/// `last-sync.json` in the cache: how the last sync by any process ended, the evidence `why`
/// answers from (it never polls). Written by every sync, under the writer lock, small and bounded.
package struct LastSync: Sendable, Codable, Equatable {
    /// Unix seconds when it ended.
    package var at: Double
    /// `committed`, `not-modified`, ... or nil when it failed.
    package var outcome: String?
    /// The failure: its exit code's name, the message, and whether a lock or a signature caused it.
    package var error: String?
    package var message: String?
    package var locked = false

    package init(at: Double, outcome: String?, error: CenariusError?) {
        self.at = at
        self.outcome = outcome
        self.error = error?.code.name
        self.message = error.map { String(Secrets.redact($0.message).prefix(1024)) }
        if case .locked? = error?.cause { locked = true }
    }

    static func record(_ result: Result<SyncReport, CenariusError>, layout: CacheLayout) {
        let entry: LastSync
        switch result {
        case .success(let report): entry = LastSync(at: FileSystem.now(), outcome: report.outcome.rawValue, error: nil)
        case .failure(let error):
            // A sync stopped by shutdown says nothing about the remote.
            guard !error.isCancelled else { return }
            entry = LastSync(at: FileSystem.now(), outcome: nil, error: error)
        }
        try? JSONFile.write(entry, to: layout.lastSync, durable: false)
    }

    package static func read(_ layout: CacheLayout) -> LastSync? { JSONFile.read(LastSync.self, layout.lastSync) }
}

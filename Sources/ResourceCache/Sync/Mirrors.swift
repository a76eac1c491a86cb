package import RouteSync

/// The one mirror loop of `sync` and `seed` (G7): each remote in turn until one gives a good
/// table, signature and manifest; a remote that cannot (an origin error or a refused table) passes
/// to the next, and the error of each is kept for the one that is thrown when none could.
package enum Mirrors {
    /// Why one remote's attempt failed, and whether the loop must stop there (`final`: the attempt
    /// got past the table, so what failed is no longer the remote's to answer, or it was cancelled).
    package struct Failure: Error {
        package var error: CenariusError
        package var final: Bool

        package init(_ error: CenariusError, final: Bool = false) {
            self.error = error
            self.final = final
        }
    }

    /// `attempt(remote, others)` for each remote in order (`others`: the rest, for files a remote lacks).
    package static func first<T>(_ remotes: [Remote], _ attempt: (Remote, [Remote]) throws(Failure) -> T) throws(CenariusError) -> T {
        var failures: [CenariusError] = []
        for (index, remote) in remotes.enumerated() {
            do throws(Failure) {
                let others = remotes.indices.filter { $0 != index }.map { remotes[$0] }
                return try attempt(remote, others)
            } catch {
                failures.append(error.error)
                guard !error.final, error.error.code == .remote || error.error.code == .integrity, index < remotes.count - 1 else { break }
            }
        }
        throw combined(failures)
    }

    /// One error for a sync that tried several mirrors: the first one's code, every one's message.
    package static func combined(_ failures: [CenariusError]) -> CenariusError {
        guard let first = failures.first else { return .internal("no remote to sync from") }
        guard failures.count > 1 else { return first }
        return CenariusError(first.code, "every mirror failed: " + failures.map(\.message).joined(separator: "; "), retryAfter: first.retryAfter, cause: first.cause)
    }
}

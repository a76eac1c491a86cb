package import RouteSync

/// Holds (G10): while any is active, new generations are downloaded but not switched to. A kiosk
/// in the middle of a payment does not get its files changed under it. Kept in the cache
/// (`release.json`, under `release.lock`), so they survive a restart until they expire.
package struct Hold: Sendable, Codable, Equatable {
    package var id: String
    package var reason: String
    package var createdAt: Double
    package var expires: Double

    package init(id: String, reason: String, createdAt: Double, expires: Double) {
        self.id = id
        self.reason = reason
        self.createdAt = createdAt
        self.expires = expires
    }
}

/// The holds in the release state (`release.json`, under `release.lock`), so that a hold and a
/// switch are decided under one lock: a hold is either seen by a switch or made after it.
package struct HoldStore: Sendable {
    package let layout: CacheLayout

    package init(layout: CacheLayout) {
        self.layout = layout
    }

    /// Holds that have not expired at `now`.
    package func active(now: Double = FileSystem.now()) -> [Hold] {
        ReleaseStore(layout: layout).read().holds.filter { $0.expires > now }
    }

    /// Adds a hold for `ttl` seconds.
    /// A hold lasts 1 second to 7 days.
    package static let ttlRange: ClosedRange<Double> = 1...(7 * 86400)
    /// What a hold's reason may hold; it is shown by `status` and kept in `release.json`.
    package static let maxReasonBytes = 1024

    package func add(ttl: Double, reason: String, now: Double = FileSystem.now()) throws(CenariusError) -> Hold {
        guard Self.ttlRange.contains(ttl) else { throw .usage("a hold's ttl must be between 1 second and 7 days") }
        var id = ""
        for _ in 0..<8 { id += String(UInt8.random(in: 0...255), radix: 16).leftPadded(2) }
        let hold = Hold(id: id, reason: reason, createdAt: now, expires: now + ttl)
        try update(now: now) { $0.append(hold) }
        return hold
    }

    /// Ends a hold; false when there was none with that id (or it had expired).
    package func remove(_ id: String, now: Double = FileSystem.now()) throws(CenariusError) -> Bool {
        try update(now: now) { holds in
            let before = holds.count
            holds.removeAll { $0.id == id }
            return holds.count != before
        }
    }

    /// Read, drop the expired, change, write, under `release.lock`.
    private func update<T>(now: Double, _ change: (inout [Hold]) -> T) throws(CenariusError) -> T {
        try ReleaseStore(layout: layout).update { state in
            state.holds.removeAll { $0.expires <= now }
            return change(&state.holds)
        }
    }
}

extension String {
    fileprivate func leftPadded(_ width: Int) -> String {
        String(repeating: "0", count: max(0, width - count)) + self
    }
}

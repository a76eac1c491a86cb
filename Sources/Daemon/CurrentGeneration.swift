import ResourceCache
import Synchronization

/// Which generation is current, for the request path. The `current` link is read again when
/// the daemon's own sync, rollback or reload may have moved it, and at least every `recheck`
/// milliseconds for switches made by other processes (`cenariusd rollback`), instead of a
/// readlink and a path walk on every request.
final class CurrentGeneration: Sendable {
    private let number = Atomic<Int>(-1)
    private let checkedAt = Atomic<Int>(0)
    let recheck: Int

    init(recheckMilliseconds: Int = 5) {
        recheck = recheckMilliseconds
    }

    func number(link: String) -> Int? {
        let now = HTTPClock.milliseconds()
        let seen = checkedAt.load(ordering: .acquiring)
        if seen != 0, now &- seen < recheck {
            let known = number.load(ordering: .relaxed)
            return known >= 0 ? known : nil
        }
        let read = GenerationStore.currentNumber(link: link)
        number.store(read ?? -1, ordering: .relaxed)
        checkedAt.store(now, ordering: .releasing)
        return read
    }

    /// The next request reads the link.
    func changed() {
        checkedAt.store(0, ordering: .releasing)
    }
}

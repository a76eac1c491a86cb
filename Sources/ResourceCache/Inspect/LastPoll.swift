import RouteSync
package import Transport

/// The origin's answer to the last poll (the head or the table): status, validators and what a
/// cache on the way said of its copy. `why` rests `origin-unchanged` on it; one small file,
/// rewritten by each poll.
package enum LastPoll {
    static func record(_ response: PolledResponse?, layout: CacheLayout) {
        guard let response else { return }
        try? JSONFile.write(response, to: layout.lastPoll, durable: false)
    }

    package static func read(_ layout: CacheLayout) -> PolledResponse? { JSONFile.read(PolledResponse.self, layout.lastPoll) }
}

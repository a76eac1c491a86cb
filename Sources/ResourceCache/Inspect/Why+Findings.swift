import RouteSync
import ReportHeader
import Transport

/// The steps of `Why.answer`, in the order they are asked: each gives its finding or passes.
extension Why {
    /// One step's finding: the code, the sentence, its evidence, and the release it is about when
    /// that is not the one the answer starts from (a download's, a waiting release's).
    struct Finding {
        var reason: WhyReason
        var message: String
        var evidence: [String: WhyAnswer.Evidence] = [:]
        var release: String?
    }

    /// Develop mode, or the release asked about is the one in force.
    static func inForce(_ facts: Facts) -> Finding? {
        if facts.develop { return Finding(reason: .developMode, message: "develop mode serves the develop folder as it is: no release applies") }
        guard let asked = facts.asked, asked == facts.currentRelease else { return nil }
        if let deadline = facts.trialDeadline {
            return Finding(reason: .trial, message: "on \(asked), on trial until \(UTCTime.text(deadline)): the app confirms it, or it is rolled back",
                           evidence: ["deadline": .number(deadline)])
        }
        return Finding(reason: .current, message: "on \(asked)")
    }

    /// A sync fetching the release now, or the last sync's failure.
    static func syncing(_ facts: Facts) -> Finding? {
        if let running = facts.downloading, facts.asked == nil || facts.asked == running.release {
            var evidence: [String: WhyAnswer.Evidence] = ["since": .number(running.since), "bytes": .number(Double(running.bytes)),
                                                          "files": .number(Double(running.filesDone)), "filesTotal": .number(Double(running.filesTotal))]
            if let expected = running.expectedBytes { evidence["expectedBytes"] = .number(Double(expected)) }
            let of = running.expectedBytes.map { " of \(ByteText.text($0))" } ?? ""
            return Finding(reason: .downloading,
                           message: "a sync is fetching \(running.release): \(running.filesDone) of \(running.filesTotal) files, \(ByteText.text(running.bytes))\(of) so far",
                           evidence: evidence, release: running.release)
        }
        // The last sync failed after the last one that reached the remote: that failure is why.
        guard let last = facts.lastSync, let error = last.error, last.at >= (facts.checkedAt ?? 0) - 1 else { return nil }
        let message = last.message ?? error
        let reason = failureReason(last)
        let text = switch reason {
        case .lock: "another process holds the cache's lock"
        case .originUnreachable: "the last sync did not reach the remote"
        case .storage: "the last sync could not write the cache"
        default: "the last sync refused what the remote offers"
        }
        return Finding(reason: reason, message: "\(text): \(message)", evidence: ["at": .number(last.at), "error": .text(error), "detail": .text(message)])
    }

    /// A release that waits: for its moment, a window, the link, a hold.
    static func waiting(_ facts: Facts) -> Finding? {
        if let deferred = facts.deferred {
            var evidence: [String: WhyAnswer.Evidence] = ["since": .number(deferred.since), "waitsFor": .text(deferred.waitsFor)]
            if let at = deferred.at { evidence["at"] = .number(at) }
            if let place = deferred.place { evidence["place"] = .number(place) }
            return Finding(reason: waitingReason(deferred.waitsFor), message: "\(deferred.release) waits: \(deferred.reason)", evidence: evidence,
                           release: deferred.release)
        }
        guard !facts.holds.isEmpty, facts.lastSync?.outcome == "held" else { return nil }
        return Finding(reason: .held, message: "a release is downloaded and waits for \(facts.holds.count) hold\(facts.holds.count == 1 ? "" : "s") to end",
                       evidence: ["holds": .text(facts.holds.map(\.id).joined(separator: ","))])
    }

    /// The release the remote offers is one this device rolled back from.
    static func heldBack(_ facts: Facts) -> Finding? {
        // Rolled back since the last sync: the release it left is still the newest the remote offered.
        if let rollback = facts.lastRollback, rollback.at >= facts.lastSync?.at ?? 0 {
            var evidence: [String: WhyAnswer.Evidence] = ["at": .number(rollback.at), "rolledBack": .text(rollback.reason.rawValue),
                                                          "fromGeneration": .number(Double(rollback.from))]
            if let detail = rollback.detail { evidence["detail"] = .text(detail) }
            return Finding(reason: .heldBack,
                           message: "generation \(rollback.from) was rolled back at \(UTCTime.text(rollback.at)) (\(rollback.reason.rawValue)\(rollback.detail.map { ": " + $0 } ?? "")); "
                               + "the release it held is not applied again",
                           evidence: evidence)
        }
        guard facts.lastSync?.outcome == "held-back" else { return nil }
        return Finding(reason: .heldBack, message: "the remote still offers the release this device rolled back from; it is not applied again")
    }

    /// Nothing stands in the way: what the last poll found (or that there was none).
    static func polled(_ facts: Facts) -> Finding {
        if facts.lastSync == nil, facts.checkedAt == nil, facts.generation == nil {
            return Finding(reason: .notPolledYet, message: "no sync has run yet: the preset is served")
        }
        if let deadline = facts.trialDeadline {
            return Finding(reason: .trial, message: "\(facts.currentRelease ?? "the release") is on trial until \(UTCTime.text(deadline))",
                           evidence: ["deadline": .number(deadline)])
        }
        let poll = facts.lastPoll.map(pollEvidence) ?? [:]
        guard let asked = facts.asked else {
            return Finding(reason: .current, message: "on \(facts.currentRelease ?? "the preset"), the newest the remote offered at the last poll", evidence: poll)
        }
        var message = "the remote does not offer \(asked) as of the last poll; on \(facts.currentRelease ?? "the preset")"
        if let served = facts.lastPoll {
            message += "; \(served.url) answered \(served.status)\(served.etag.map { " (ETag \($0))" } ?? "") at \(UTCTime.text(served.at))"
            if let until = served.staleUntil, until > served.at {
                message += ", a copy a cache on the way may serve unchanged until \(UTCTime.text(until))"
            }
        }
        return Finding(reason: .originUnchanged, message: message, evidence: poll)
    }
}

import RouteSync
package import Transport
package import ReportHeader

/// A `why` answer: the code, the release it is about, the evidence it rests on, and a sentence.
package struct WhyAnswer: Sendable, Encodable {
    package enum Evidence: Sendable, Encodable, Equatable {
        case text(String)
        case number(Double)

        package func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .text(let text): try container.encode(text)
            case .number(let number): try container.encode(number)
            }
        }
    }

    package var reason: WhyReason
    /// The release asked about, else the newest this device knows the remote offers.
    package var release: String?
    /// The release in force.
    package var current: String?
    package var evidence: [String: Evidence]
    package var message: String
    /// What a person can do about it.
    package var advice: String { reason.advice }

    enum CodingKeys: String, CodingKey { case reason, release, current, evidence, message, advice }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(reason, forKey: .reason)
        // Always there, null when no release applies (develop mode): the contract's object has it.
        if let release { try container.encode(release, forKey: .release) } else { try container.encodeNil(forKey: .release) }
        try container.encodeIfPresent(current, forKey: .current)
        try container.encode(evidence, forKey: .evidence)
        try container.encode(message, forKey: .message)
        try container.encode(advice, forKey: .advice)
    }
}

/// What the device recorded, read into one answer. Pure: the inputs are the cache's records.
package enum Why {
    /// What the answer rests on: the cache's small records, read without walking the store, so
    /// that a poll's report can carry the code too.
    package struct Facts: Sendable {
        package var checkedAt: Double?
        package var generation: Int?
        package var trialDeadline: Double?
        package var deferred: CacheStatus.Deferred?
        package var holds: [Hold] = []
        package var lastRollback: ReleaseState.RollbackRecord?
        package var lastSync: LastSync?
        /// The origin's answer to the last poll: what `origin-unchanged` and `current` rest on.
        package var lastPoll: PolledResponse?
        /// A sync downloading a release right now.
        package var downloading: DownloadProgress?
        package var develop: Bool
        /// The release in force: its manifest's name, else the short hash of its table.
        package var currentRelease: String?
        /// `why RELEASE`: the release asked about.
        package var asked: String?

        package static func read(_ settings: SyncSettings, currentMeta: GenerationMeta?, develop: Bool, asked: String?) -> Facts {
            let layout = settings.cache
            let release = ReleaseStore(layout: layout).read()
            let currentRelease = currentMeta?.release
                ?? (currentMeta == nil ? (try? FileSystem.readFile(settings.preset.tablePath)).map(FleetReport.releaseName(ofTable:)) : nil)
            return Facts(checkedAt: FileSystem.modificationTime(layout.checked), generation: currentMeta?.number,
                         trialDeadline: release.trial?.generation == currentMeta?.number ? release.trial?.deadline : nil,
                         deferred: CacheStatus.Deferred.read(layout), holds: HoldStore(layout: layout).active(), lastRollback: release.lastRollback,
                         lastSync: LastSync.read(layout), lastPoll: LastPoll.read(layout), downloading: DownloadProgress.read(layout),
                         develop: develop, currentRelease: currentRelease, asked: asked)
        }
    }

    /// The answer from the cache's records, as `why`, `status --json` and `GET /_cenarius/why` give it.
    package static func read(_ settings: SyncSettings, develop: Bool, asked: String?) -> WhyAnswer {
        let currentMeta = try? GenerationStore(layout: settings.cache).current()?.meta()
        return answer(Facts.read(settings, currentMeta: currentMeta, develop: develop, asked: asked))
    }

    package static func answer(_ facts: Facts) -> WhyAnswer {
        var answer = WhyAnswer(reason: .current, release: facts.asked ?? facts.deferred?.release ?? facts.currentRelease,
                               current: facts.currentRelease, evidence: [:], message: "")
        if let checked = facts.checkedAt { answer.evidence["lastChecked"] = .number(checked) }
        // The first step with a finding is the answer, in the order docs/why.md gives ("The order of the checks").
        let finding = inForce(facts) ?? syncing(facts) ?? waiting(facts) ?? heldBack(facts) ?? polled(facts)
        answer.reason = finding.reason
        answer.message = finding.message
        answer.evidence.merge(finding.evidence) { $1 }
        if let release = finding.release { answer.release = release }
        return answer
    }

    /// The last poll's answer as evidence: what was asked, what came back, and what a cache on
    /// the way said of its copy (`Age`, `Date`, `Cache-Control`, and so until when it may serve it).
    static func pollEvidence(_ served: PolledResponse) -> [String: WhyAnswer.Evidence] {
        var evidence: [String: WhyAnswer.Evidence] = ["polled": .text(served.url), "status": .number(Double(served.status)), "polledAt": .number(served.at)]
        let texts: [(String, String?)] = [("etag", served.etag), ("lastModified", served.lastModified), ("age", served.age),
                                          ("date", served.date), ("cacheControl", served.cacheControl)]
        for (key, value) in texts { if let value { evidence[key] = .text(value) } }
        if let until = served.staleUntil { evidence["staleUntil"] = .number(until) }
        return evidence
    }

    /// The code of a failed sync: the lock, the remote, local storage, else what the remote offered
    /// was refused (its signature, or its integrity). Events and `why` say the same.
    package static func failureReason(_ last: LastSync) -> WhyReason {
        if last.locked { return .lock }
        switch last.error {
        case "REMOTE": return .originUnreachable
        case "STORAGE": return .storage
        default:
            let message = last.message ?? ""
            let signed = ["signature", "signed", "expired", "rollback refused", "not signed", "rotation"].contains { message.contains($0) }
            return signed ? .signature : .integrity
        }
    }

    /// The code of a release that waits, from what it waits for (`SyncReport.Deferral.reason`).
    package static func waitingReason(_ waitsFor: String) -> WhyReason {
        switch waitsFor {
        case "compatibility": .deferredNative
        case "halted": .halted
        case "hold": .held
        case "download-window": .downloadWindow
        case "metered": .metered
        case "switch-window": .switchWindow
        case "inhibited": .inhibited
        case "switch-at-start": .switchAtStart
        default: .deferredMoment
        }
    }
}

import RouteSync
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
        package var lastSync: LastSync?
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
                         deferred: CacheStatus.Deferred.read(layout), holds: HoldStore(layout: layout).active(),
                         lastSync: LastSync.read(layout), develop: develop, currentRelease: currentRelease, asked: asked)
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
        func say(_ reason: WhyReason, _ message: String, _ evidence: [String: WhyAnswer.Evidence] = [:]) -> WhyAnswer {
            answer.reason = reason
            answer.message = message
            answer.evidence.merge(evidence) { $1 }
            return answer
        }
        if let checked = facts.checkedAt { answer.evidence["lastChecked"] = .number(checked) }
        if facts.develop { return say(.developMode, "develop mode serves the develop folder as it is: no release applies") }
        if let asked = facts.asked, asked == facts.currentRelease {
            if let deadline = facts.trialDeadline {
                return say(.trial, "on \(asked), on trial until \(UTCTime.text(deadline)): the app confirms it, or it is rolled back", ["deadline": .number(deadline)])
            }
            return say(.current, "on \(asked)")
        }
        // The last sync failed after the last one that reached the remote: that failure is why.
        if let last = facts.lastSync, let error = last.error, last.at >= (facts.checkedAt ?? 0) - 1 {
            let message = last.message ?? error
            let evidence: [String: WhyAnswer.Evidence] = ["at": .number(last.at), "error": .text(error), "detail": .text(message)]
            if last.locked { return say(.lock, "another process holds the cache's lock: \(message)", evidence) }
            switch error {
            case "REMOTE": return say(.originUnreachable, "the last sync did not reach the remote: \(message)", evidence)
            case "STORAGE": return say(.storage, "the last sync could not write the cache: \(message)", evidence)
            default:
                let signed = ["signature", "signed", "expired", "rollback refused", "not signed", "rotation"].contains { message.contains($0) }
                return say(signed ? .signature : .integrity, "the last sync refused what the remote offers: \(message)", evidence)
            }
        }
        if let deferred = facts.deferred {
            var evidence: [String: WhyAnswer.Evidence] = ["since": .number(deferred.since), "waitsFor": .text(deferred.waitsFor)]
            if let at = deferred.at { evidence["at"] = .number(at) }
            if let place = deferred.place { evidence["place"] = .number(place) }
            let reason: WhyReason = switch deferred.waitsFor {
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
            answer.release = deferred.release
            return say(reason, "\(deferred.release) waits: \(deferred.reason)", evidence)
        }
        if !facts.holds.isEmpty, facts.lastSync?.outcome == "held" {
            return say(.held, "a release is downloaded and waits for \(facts.holds.count) hold\(facts.holds.count == 1 ? "" : "s") to end",
                       ["holds": .text(facts.holds.map(\.id).joined(separator: ","))])
        }
        if facts.lastSync?.outcome == "held-back" {
            return say(.heldBack, "the remote still offers the release this device rolled back from; it is not applied again")
        }
        if facts.lastSync == nil, facts.checkedAt == nil, facts.generation == nil {
            return say(.notPolledYet, "no sync has run yet: the preset is served")
        }
        if let deadline = facts.trialDeadline {
            return say(.trial, "\(facts.currentRelease ?? "the release") is on trial until \(UTCTime.text(deadline))", ["deadline": .number(deadline)])
        }
        if let asked = facts.asked {
            return say(.originUnchanged, "the remote does not offer \(asked) as of the last poll; on \(facts.currentRelease ?? "the preset")")
        }
        return say(.current, "on \(facts.currentRelease ?? "the preset"), the newest the remote offered at the last poll")
    }
}

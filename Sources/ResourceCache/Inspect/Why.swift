package import RouteSync
import ReportHeader

/// Why a device is or is not on a release (docs/why.md): one stable code. A code never changes
/// meaning once shipped; new situations get new codes.
package enum WhyReason: String, CaseIterable, Sendable, Codable {
    case current
    case notPolledYet = "not-polled-yet"
    case originUnreachable = "origin-unreachable"
    case originUnchanged = "origin-unchanged"
    case signature
    case integrity
    case heldBack = "held-back"
    case trial
    case deferredMoment = "deferred-moment"
    case deferredNative = "deferred-native"
    case halted
    case held
    case downloading
    case storage
    case lock
    case developMode = "develop-mode"

    /// `why`'s exit code: 0 only on the release; else the class of what stands in the way
    /// (3 the remote, 4 integrity, 5 local storage), 2 for a release not (yet) here.
    package var exitCode: Int32 {
        switch self {
        case .current: 0
        case .originUnreachable: 3
        case .signature, .integrity, .heldBack: 4
        case .storage, .lock: 5
        default: 2
        }
    }
}

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
    package struct Facts: Sendable {
        package var status: CacheStatus
        package var lastSync: LastSync?
        package var develop: Bool
        /// The release in force: its manifest's name, else the short hash of its table.
        package var currentRelease: String?
        /// `why RELEASE`: the release asked about.
        package var asked: String?
        package var now: Double

        package init(status: CacheStatus, lastSync: LastSync?, develop: Bool, currentRelease: String?, asked: String?, now: Double) {
            self.status = status
            self.lastSync = lastSync
            self.develop = develop
            self.currentRelease = currentRelease
            self.asked = asked
            self.now = now
        }
    }

    /// The answer from the cache's records, as `why`, `status --json` and `GET /_cenarius/why` give it.
    package static func read(_ settings: SyncSettings, develop: Bool, asked: String?) throws(CenariusError) -> WhyAnswer {
        let layout = settings.cache
        let status = try CacheStatus.read(settings)
        let current = GenerationStore(layout: layout).current()
        let release = (try? current?.meta())?.release
            ?? (try? FileSystem.readFile(current?.tablePath ?? settings.preset.tablePath)).map(FleetReport.releaseName(ofTable:))
        return answer(Facts(status: status, lastSync: LastSync.read(layout), develop: develop, currentRelease: release, asked: asked, now: FileSystem.now()))
    }

    package static func answer(_ facts: Facts) -> WhyAnswer {
        let status = facts.status
        var answer = WhyAnswer(reason: .current, release: facts.asked ?? status.deferred?.release ?? facts.currentRelease,
                               current: facts.currentRelease, evidence: [:], message: "")
        func say(_ reason: WhyReason, _ message: String, _ evidence: [String: WhyAnswer.Evidence] = [:]) -> WhyAnswer {
            answer.reason = reason
            answer.message = message
            answer.evidence.merge(evidence) { $1 }
            return answer
        }
        if let checked = status.checkedAt { answer.evidence["lastChecked"] = .number(checked) }
        if facts.develop { return say(.developMode, "develop mode serves the develop folder as it is: no release applies") }
        if let asked = facts.asked, asked == facts.currentRelease {
            if status.trial, let deadline = status.trialDeadline {
                return say(.trial, "on \(asked), on trial until \(UTCTime.text(deadline)): the app confirms it, or it is rolled back", ["deadline": .number(deadline)])
            }
            return say(.current, "on \(asked)")
        }
        // The last sync failed after the last one that reached the remote: that failure is why.
        if let last = facts.lastSync, let error = last.error, last.at >= (status.checkedAt ?? 0) - 1 {
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
        if let deferred = status.deferred {
            var evidence: [String: WhyAnswer.Evidence] = ["since": .number(deferred.since), "waitsFor": .text(deferred.waitsFor)]
            if let at = deferred.at { evidence["at"] = .number(at) }
            if let place = deferred.place { evidence["place"] = .number(place) }
            let reason: WhyReason = switch deferred.waitsFor {
            case "compatibility": .deferredNative
            case "halted": .halted
            case "hold": .held
            default: .deferredMoment
            }
            answer.release = deferred.release
            return say(reason, "\(deferred.release) waits: \(deferred.reason)", evidence)
        }
        if !status.holds.isEmpty, facts.lastSync?.outcome == "held" {
            return say(.held, "a release is downloaded and waits for \(status.holds.count) hold\(status.holds.count == 1 ? "" : "s") to end",
                       ["holds": .text(status.holds.map(\.id).joined(separator: ","))])
        }
        if facts.lastSync?.outcome == "held-back" {
            return say(.heldBack, "the remote still offers the release this device rolled back from; it is not applied again")
        }
        if facts.lastSync == nil, status.checkedAt == nil, status.generation == nil {
            return say(.notPolledYet, "no sync has run yet: the preset is served")
        }
        if status.trial, let deadline = status.trialDeadline {
            return say(.trial, "\(facts.currentRelease ?? "the release") is on trial until \(UTCTime.text(deadline))", ["deadline": .number(deadline)])
        }
        if let asked = facts.asked {
            return say(.originUnchanged, "the remote does not offer \(asked) as of the last poll; on \(facts.currentRelease ?? "the preset")")
        }
        return say(.current, "on \(facts.currentRelease ?? "the preset"), the newest the remote offered at the last poll")
    }
}

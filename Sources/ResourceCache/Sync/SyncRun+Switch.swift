#if canImport(Glibc)
import Glibc
#endif
import RouteSync

extension SyncRun {
    /// The last of a sync's three steps: the staged generation becomes current in one rename,
    /// unless a hold stops it; then what the switch made stale is let go.
    func switchTo(_ staged: Staged) throws(CenariusError) -> SyncReport {
        let store = GenerationStore(layout: layout)
        let offer = staged.offer
        // The release machine's leave, under the lock holds are added with, at the switch itself:
        // a hold answered 201 while this generation was built stops this switch (invariant 5).
        let switched = try LocalRelease.whenCommitPermitted(layout: layout) { permit throws(CenariusError) in
            effect(.committed)
            let committed = try store.commit(building: staged.generation, number: staged.number, permit: permit)
            // Another release is current: the one held back may be taken again when offered.
            try ReleaseStore(layout: layout).updateHoldingLock { state in
                guard state.heldBack != nil else { return }
                effect(.heldBackCleared)
                state.heldBack = nil
            }
            return committed
        }
        guard switched != nil else {
            FileSystem.removeTree(staged.generation)
            let holding = try offer.admission.holding()
                ?? .init(release: offer.admission.release, reason: "hold", detail: "a hold was active at the switch", place: nil, at: nil)
            return waitingForHolds(holding, report: staged.report, offer: offer)
        }
        syncer.clearPending()
        syncer.markChecked()
        var report = staged.report
        report.generation = staged.number
        effect(.garbageCollected)
        let collected = store.collectGarbage(keep: settings.keepGenerations, grace: settings.grace)
        report.removedGenerations = collected.generations
        report.removedObjects = collected.objects
        report.seconds = FileSystem.monotonic() - started
        return report
    }
}

package import RouteSync

/// Carries out an upload plan phase by phase: nothing of a phase starts before the one before it
/// is wholly written, and the last names one at a time, the head at the very end.
package enum PlanRunner {
    package struct Progress: Sendable {
        package var done = 0
        package var total = 0
        package var bytes: Int64 = 0
        package var totalBytes: Int64 = 0
    }

    /// What keeps a run from writing over another publisher's release: the lock it holds (renewed
    /// as objects are written), and the head it read, which must still be there when the Cenarius
    /// layout and the head are written — a writer that ignored the lock (an older cenariusd, a sync
    /// tool) stops the run there, before it moves the head back.
    package struct Guard: Sendable {
        package var lock: any PublishLock
        package var headKey: String
        /// The head's exact bytes when the run's state was read (nil: there was none).
        package var head: [UInt8]?

        package init(lock: any PublishLock, headKey: String, head: [UInt8]?) {
            self.lock = lock
            self.headKey = headKey
            self.head = head
        }

        func check(_ destination: some Destination) throws(CenariusError) {
            try lock.confirm()
            let now = try destination.read(headKey, limit: ReleaseHead.maxBytes)
            guard now == head else {
                throw .remote("\(destination.description)\(headKey) changed while this publish ran (another publisher that does not take "
                    + "\(LockHolder.key)?): stopped before the Cenarius layout and the head; the channel serves the other release; run it again")
            }
        }
    }

    /// The plan's phases, in order, as a test hook names them (`CENARIUS_TEST_PAUSE_BEFORE`).
    package enum Phase: String, Sendable, CaseIterable {
        case store, layout, removals, last
    }

    /// `report` is called after every object written or removed; `before` before each phase.
    package static func run(_ plan: UploadPlan, to destination: some Destination, guard check: Guard? = nil,
                            before: (Phase) -> Void = { _ in }, report: (Progress) -> Void) throws(CenariusError) {
        var progress = Progress(total: plan.uploads.count + plan.removals.count, totalBytes: plan.bytes)
        var renewal: CenariusError?
        let written = { (upload: Upload) in
            progress.done += 1
            progress.bytes += upload.sent
            report(progress)
            do throws(CenariusError) { try check?.lock.renew() } catch { renewal = renewal ?? error }
        }
        before(.store)
        try destination.write(plan.store, progress: written)
        if let renewal { throw renewal }
        before(.layout)
        try check?.check(destination)
        try destination.write(plan.layout, progress: written)
        before(.removals)
        try destination.delete(plan.removals) { _ in
            progress.done += 1
            report(progress)
        }
        before(.last)
        try check?.check(destination)
        for pointer in plan.last {
            // A lease found lost after one pointer stops the next, the head above all.
            if let renewal { throw renewal }
            try destination.write([pointer], progress: written)
        }
        if let renewal { throw renewal }
    }
}

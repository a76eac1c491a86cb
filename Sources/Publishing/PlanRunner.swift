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

    /// `report` is called after every object written or removed.
    package static func run(_ plan: UploadPlan, to destination: some Destination, report: (Progress) -> Void) throws(CenariusError) {
        var progress = Progress(total: plan.uploads.count + plan.removals.count, totalBytes: plan.bytes)
        let written = { (upload: Upload) in
            progress.done += 1
            progress.bytes += upload.size
            report(progress)
        }
        try destination.write(plan.store, progress: written)
        try destination.write(plan.layout, progress: written)
        try destination.delete(plan.removals) { _ in
            progress.done += 1
            report(progress)
        }
        for pointer in plan.last { try destination.write([pointer], progress: written) }
    }
}

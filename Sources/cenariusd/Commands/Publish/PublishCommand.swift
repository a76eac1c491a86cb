import ArgumentParser
import Publishing
import RouteSync
import Settings

#if canImport(Glibc)
import Glibc
#endif

struct PublishCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "publish",
        abstract: "Publish a build folder to a remote: a folder or an S3-compatible object store (publishers).",
        discussion: """
            Writes what `routes` writes for BUILD — the table, forms, patches from the channel's \
            last releases (read from DEST itself), the signature and the head — and uploads it in the \
            one safe order: store objects DEST lacks, then the Cenarius layout's files, then \
            Routes.json and the head. Killed at any moment, the channel stays on its previous \
            release, whole; run again, it uploads only what is missing. An unchanged build uploads \
            nothing. It holds DEST's publish lock while it writes: a second publish waits for the \
            first and builds on its release (docs/publish.md). Store objects get `Cache-Control: public, max-age=31536000, immutable`, the \
            head, table, sidecars and files at their uris `max-age=--pointer-max-age, must-revalidate` \
            (docs/publish.md has the matching rules for nginx and CDNs).

            DEST is a folder, file:///PATH or s3://BUCKET/PREFIX. For S3 the credentials and region \
            come from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN and AWS_REGION, or a \
            profile of ~/.aws/credentials (AWS_PROFILE); --endpoint (or AWS_ENDPOINT_URL) for any \
            other S3-compatible store.

            Example:
              cenariusd publish ./dist --to /srv/www --sign-key release.key
              cenariusd publish ./dist --to s3://assets/app --endpoint https://ACCOUNT.r2.cloudflarestorage.com \\
                  --release 2026.11-b --rollout-duration 86400 --sign-key release.key
              cenariusd publish ./dist --to s3://assets/app --channel beta --dry-run

            """)

    @Argument(help: ArgumentHelp("The build folder to publish.", valueName: "build"))
    var build: String
    @Option(help: ArgumentHelp("The remote: a folder, file:///PATH or s3://BUCKET/PREFIX.", valueName: "dest"))
    var to: String
    @Option(help: ArgumentHelp("The channel to publish to (its head is Routes.CHANNEL.head; the default channel's also writes the Cenarius layout).", valueName: "channel"))
    var channel: String = ReleaseHead.defaultChannel
    @OptionGroup var releaseOptions: ReleaseOptions
    @OptionGroup var destination: DestinationOptions
    @Option(help: ArgumentHelp("Patch from this many of the channel's latest releases (0: none).", valueName: "n"))
    var patches = 2
    @Option(help: ArgumentHelp("Seconds a CDN may serve the head, the table, its sidecars and the files at their uris before asking again.", valueName: "seconds"))
    var pointerMaxAge = 60
    @Option(help: "Hash algorithm of the table: md5 (Cenarius' own) or sha256.")
    var algorithm: String = "md5"
    @Option(help: ArgumentHelp("Then fetch the head and what it names through this URL (the CDN's), as a device would, and say whether it serves the new release yet.", valueName: "url"))
    var publicURL: String?
    @Flag(help: "Publish a build folder that holds no file: every device then serves an empty site.") var allowEmpty = false
    @Flag(help: "Make a new solid pack (a first install's object) even when the last one could be carried forward.") var repack = false
    @Flag(help: "Say what would be uploaded, and upload nothing.") var dryRun = false
    @Flag(help: "Print one JSON object.") var json = false

    struct Summary: Encodable {
        var destination: String
        var channel: String
        var version: Int64?
        var table: String
        var unchanged: Bool
        var dryRun: Bool
        var uploaded: Int
        var uploadedBytes: Int64
        /// Of `uploaded`, the objects the destination copied from a store object it holds: no bytes sent.
        var copied = 0
        var skipped: Int
        var skippedBytes: Int64
        var removed: [String]
        var baseBytesRead: Int64
        /// `carried`: the last solid pack carried forward (no new one made or uploaded); `made`: a new one.
        var pack: String?
        /// The release was staged again under the lock: the remote changed after it was first read (another publish landed).
        var restaged = false
        var seconds: Double
        var edge: EdgeCheck?
    }

    func validate() throws {
        try ReleaseHead.validateChannel(channel)
        guard ContentHash.Algorithm(rawValue: algorithm) != nil else { throw ValidationError("--algorithm must be md5 or sha256") }
        guard (0...8).contains(patches) else { throw ValidationError("--patches must be 0 to 8") }
        guard (0...31_536_000).contains(pointerMaxAge) else { throw ValidationError("--pointer-max-age must be 0 to 31536000 seconds") }
        guard FileSystem.isDirectory(build) else { throw ValidationError("\(build) is not a folder") }
    }

    func run() async throws {
        let started = FileSystem.monotonic()
        let remote = try destination.open(to)
        let built = try RouteTableBuilder(root: build, routesName: destination.routesName, algorithm: ContentHash.Algorithm(rawValue: algorithm)!).build()
        for (path, reason) in built.skipped { Output.warn("skipped \(path): \(reason)") }
        // A CI whose build step failed quietly leaves an empty folder: published, it would empty the site everywhere.
        if built.table.count == 0, !allowEmpty {
            throw CenariusError.usage("\(build) holds no file to publish (did the build fail?): nothing uploaded; pass --allow-empty to publish an empty site")
        }
        let digest = ReleaseIndex.tableDigest(built.table.serialized())
        // Read without the lock first: an unchanged build writes nothing at all, not even the lock.
        // A head that names another table says so in one request: the lock is then claimed at once,
        // and the remote read and the release staged while it settles.
        var first: RemoteState?
        let named = try dryRun ? nil : headTable(remote)
        TestPause.trace("head")
        if dryRun || named == digest {
            var state = try readState(remote)
            if try isPublished(state: &state, remote: remote, digest: digest, built: built) { return try unchanged(state, remote: remote, digest: digest, started: started) }
            if dryRun { return try publish(built, digest: digest, staged: try stage(built, state: state, remote: remote), remote: remote, lock: nil, started: started) }
            first = state
        }
        // A holder whose lease another claim wrote over (after a short settle) stops before what
        // names a release, waits for that one and publishes on top of it, as a claim that lost would.
        for attempt in 1... {
            do {
                return try publishLocked(built, digest: digest, first: first, remote: remote, started: started)
            } catch let error as CenariusError where error.cause == .lockTaken && attempt < 3 {
                Output.warn("\(error.message); waiting for it, then publishing again")
                first = nil
            }
        }
    }

    private func publishLocked(_ built: RouteTableBuilder.Result, digest: String, first: RemoteState?,
                               remote: any Destination, started: Double) throws {
        let (channel, routesName, records) = (channel, destination.routesName, patches + 4)
        try PublishLocking.run(remote, meanwhile: { claims in
            var early = try stage(built, state: first ?? readState(remote), remote: remote)
            writeStore(of: &early, to: remote, claims: claims)
            return early
        }, discard: { $0.staging.remove() }, reread: { () throws(CenariusError) in
            let state = try RemoteState.read(remote, channel: channel, routesName: routesName, records: records)
            TestPause.trace("reread")
            return state
        }) { lock, early, reread, claim in
            // What the destination holds now that nobody else writes it: another publish may have finished meanwhile.
            var now = reread
            // The early release is the one staging now would make only if the destination holds exactly what it was staged on.
            let reusable = early.flatMap { $0.state.holdsTheSame(as: now, besides: $0.written) ? $0 : nil }
            if reusable == nil { early?.staging.remove() }
            if try isPublished(state: &now, remote: remote, digest: digest, built: built) {
                reusable?.staging.remove()
                return try unchanged(now, remote: remote, digest: digest, started: started)
            }
            var staged = try reusable ?? stage(built, state: now, remote: remote)
            staged.again = reusable == nil
            // Written in the settle of an earlier claim, which lost: the holder then may have pruned them.
            if staged.storeWritten != claim { staged.storeWritten = nil }
            try publish(built, digest: digest, staged: staged, remote: remote, lock: lock, started: started)
        }
    }

    /// The table the channel's head names, if it has one that reads.
    private func headTable(_ remote: any Destination) throws -> String? {
        let key = ReleaseHead.name(routesName: destination.routesName, channel: channel)
        return try remote.read(key, limit: ReleaseHead.maxBytes).flatMap { try? ReleaseHead.parse($0, source: remote.description + key) }?.table
    }

    private func readState(_ remote: any Destination) throws -> RemoteState {
        let state = try RemoteState.read(remote, channel: channel, routesName: destination.routesName, records: patches + 4)
        TestPause.trace("remote-read")
        return state
    }

    private func summary(_ remote: any Destination, state: RemoteState, digest: String) -> Summary {
        Summary(destination: remote.description, channel: channel, version: state.head?.version, table: digest, unchanged: false,
                dryRun: dryRun, uploaded: 0, uploadedBytes: 0, skipped: 0, skippedBytes: 0, removed: [], baseBytesRead: 0, pack: nil, seconds: 0)
    }

    private func unchanged(_ state: RemoteState, remote: any Destination, digest: String, started: Double) throws {
        var summary = summary(remote, state: state, digest: digest)
        summary.unchanged = true
        summary.seconds = FileSystem.monotonic() - started
        if let head = state.head, let bytes = state.headBytes { summary.edge = checkEdge(head: head, bytes: bytes, headKey: state.headKey) }
        if json { Output.json(summary) } else { Output.line("\(remote.description): channel \(channel) already has this release (version \(state.head?.version ?? 0)); nothing uploaded") }
        try report(summary.edge)
    }

    /// A release staged against `state`, in a staging folder of its own.
    private struct Early {
        var state: RemoteState
        var staging: Staging
        var publication: Publication
        var staged: Publication.Staged
        /// Staged under the lock, the remote having changed since it was first read.
        var again = false
        /// The claim of the lock after which its store objects were written (`writeStore`); nil: not written yet.
        var storeWritten: Int?
        var written: Set<String> { storeWritten == nil ? [] : Set(staged.plan.store.map(\.key)) }
    }

    /// Writes the staged release's store objects at once if the lock has been claimed, so that
    /// their upload overlaps the lease's settle rather than following it. They are content-addressed
    /// (whoever writes one writes the same bytes) and nothing names them until this publish writes
    /// its layout and head, under the lock; why no `prune` can delete them before that is
    /// `S3Destination.lock`'s to say. Not yet claimed (another publish holds the lock, whose release
    /// will likely change what to stage): left to the store phase. A failure here is not one: the
    /// store phase writes them under the lock, where its failure counts.
    private func writeStore(of early: inout Early, to remote: any Destination, claims: () -> Int) {
        let claim = claims()
        guard claim > 0 else { return }
        TestPause.at("early-store")
        guard (try? remote.write(early.staged.plan.store, progress: { _ in })) != nil else { return }
        early.storeWritten = claim
        TestPause.trace("early-stored")
    }

    private func stage(_ built: RouteTableBuilder.Result, state: RemoteState, remote: any Destination) throws -> Early {
        let staging = try Staging()
        do {
            var publication = Publication(remote: remote, state: state, releaseOptions: releaseOptions)
            publication.patches = patches
            publication.pointerMaxAge = pointerMaxAge
            publication.algorithm = algorithm
            publication.carry = !repack
            let staged = try publication.stage(build, table: built.table, bytes: built.bytes, in: staging)
            TestPause.trace("staged")
            return Early(state: state, staging: staging, publication: publication, staged: staged)
        } catch {
            staging.remove()
            throw error
        }
    }

    /// Uploads a staged release (under `lock`; none for a dry run, which uploads nothing).
    private func publish(_ built: RouteTableBuilder.Result, digest: String, staged early: Early, remote: any Destination, lock: (any PublishLock)?,
                         started: Double) throws {
        let (state, publication, staged) = (early.state, early.publication, early.staged)
        defer { early.staging.remove() }
        var summary = summary(remote, state: state, digest: digest)
        let (plan, record) = (staged.plan, staged.record)
        summary.baseBytesRead = staged.baseBytesRead
        summary.pack = staged.forms == "carried" ? "carried" : "made"
        summary.version = record.head.version
        summary.uploaded = plan.uploads.count
        summary.uploadedBytes = plan.bytes
        summary.copied = plan.copies
        summary.skipped = plan.skipped
        summary.skippedBytes = plan.skippedBytes
        summary.removed = plan.removals
        summary.restaged = early.again
        guard let lock else {
            summary.seconds = FileSystem.monotonic() - started
            if json { Output.json(summary) } else { describe(plan, version: record.head.version) }
            return
        }
        var rest = plan
        if early.storeWritten != nil { rest.store = [] }
        try publication.upload(rest, json: json, lock: lock)
        TestPause.trace("uploaded")
        summary.seconds = FileSystem.monotonic() - started
        summary.edge = checkEdge(head: record.head, bytes: record.headBytes, headKey: state.headKey)
        if json {
            Output.json(summary)
        } else {
            Output.line("published \(build) to \(remote.description), channel \(channel): version \(record.head.version)\(record.head.signature == nil ? "" : ", signed"); "
                + "uploaded \(plan.uploads.count) objects (\(Output.bytes(plan.bytes))\(plan.copies > 0 ? "; \(plan.copies) copied on the store" : "")), "
                + "\(plan.skipped) already there, in \(Output.seconds(summary.seconds))")
        }
        try report(summary.edge)
    }

    private func checkEdge(head: ReleaseHead, bytes: [UInt8], headKey: String) -> EdgeCheck? {
        publicURL.map { EdgeCheck.run(publicURL: $0, headKey: headKey, head: head, headBytes: bytes, caFile: destination.cacert) }
    }

    /// The device's-eye view in words; what a device would fail on is the remote's failure (exit 3).
    private func report(_ edge: EdgeCheck?) throws {
        guard let edge else { return }
        if !json {
            if edge.serving {
                Output.line("\(edge.url) serves the new head, and \(edge.objectsChecked) objects it names as written")
            } else if let version = edge.servedVersion {
                let until = edge.staleFor.map { "; it may go on serving it for \($0) s (Age \(edge.age ?? 0) of max-age \(edge.maxAge ?? 0))" } ?? ""
                Output.line("\(edge.url) still serves version \(version)\(until)")
            }
        }
        if !edge.problems.isEmpty { throw CenariusError.remote("through \(edge.url): " + edge.problems.joined(separator: "; ")) }
    }

    /// The channel's head names this table and manifest already, signed by every key given (or by
    /// none when none is), and the Cenarius layout agrees with it (a failed publish may have left
    /// another release's files at their uris: then it is published again, and they are put right).
    private func isPublished(state: inout RemoteState, remote: any Destination, digest: String, built: RouteTableBuilder.Result) throws -> Bool {
        guard let head = state.head, head.table == digest, head.release == (try releaseOptions.manifest()?.serialized()),
              releaseOptions.expires == nil, releaseOptions.rotation.isEmpty, releaseOptions.tableVersion == nil else { return false }
        if state.isDefaultChannel {
            state.layoutMatching = try LayoutCheck.matching(built.table, build: build, in: remote, objects: state.objects)
            guard state.layoutAgreesWithHead else { return false }
        }
        // A head written by `routes` without the store's other objects is not a publish's.
        guard head.index != nil, state.objects[ReleaseRecord.key(channel: channel, version: head.version)] != nil else { return false }
        let keys = try releaseOptions.signKey.map { path throws(CenariusError) in TableSignature.keyID(of: try SigningKeys.readPrivate(path)) }
        guard let signature = head.signature else { return keys.isEmpty }
        let signers = Set((try? TableSignature.parse(signature, source: state.headKey))?.signatures.map(\.keyID) ?? [])
        return !keys.isEmpty && keys.allSatisfy(signers.contains)
    }

    private func describe(_ plan: UploadPlan, version: Int64) {
        Output.line("would publish \(build) to channel \(channel) as version \(version): \(plan.uploads.count) objects (\(Output.bytes(plan.bytes))), \(plan.skipped) already there")
        for (phase, uploads) in [("store", plan.store), ("layout", plan.layout), ("last", plan.last)] {
            for upload in uploads { Output.line("  \(phase)  \(upload.key)  \(Output.bytes(upload.size))  \(upload.cacheControl)") }
        }
        for key in plan.removals { Output.line("  remove  \(key)") }
    }
}


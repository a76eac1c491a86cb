import ArgumentParser
import Publishing
import RouteSync
import Transport
import Settings

#if canImport(Glibc)
import Glibc
#endif

/// One release staged for a channel and planned for upload: what `publish` does with a build
/// folder, and `rollback`, `promote`, `halt` and `resume` with a release rebuilt from the store.
/// The release is written by the `ReleaseWriter` that `routes` writes with (into a private staging
/// folder), so a published remote is byte for byte what `routes` and an upload would have made.
struct Publication {
    let remote: any Destination
    let state: RemoteState
    var releaseOptions: ReleaseOptions
    /// The manifest's exact bytes when they come from a stored release, not from the options
    /// (`.some(nil)`: the release has none).
    var manifest: [UInt8]??
    var patches = 2
    var pointerMaxAge = 60
    var algorithm = "md5"
    var origin = "publish"
    /// Carry the channel's solid pack forward while the delta from its table stays small
    /// (FormPublisher.Carry); false: a new one (`publish --repack`, and every republish).
    var carry = false
    /// A republish's signer: the options' keys with the trust the channel's head publishes (`inheritedSigner()`).
    var republishSigner: ReleaseSigner?
    /// The release being republished was signed (`republish`): unsigning it needs `--unsigned` too.
    var republishedSigned = false
    /// The forms a republish read from the store while it rebuilt the files: values for the writer, not files in the staging folder.
    var heldForms: [String: [UInt8]] = [:]

    var channel: String { state.channel }
    var routesName: String { state.routesName }

    struct Staged {
        var plan: UploadPlan
        var record: ReleaseRecord
        var baseBytesRead: Int64
        /// Where the forms came from: `store` (pointers only: the table the channel's head names),
        /// `reused` (the store's packs and forms, with patches and delta packs made), `made`.
        var forms = "made"
    }

    init(remote: any Destination, state: RemoteState, releaseOptions: ReleaseOptions) {
        self.remote = remote
        self.state = state
        self.releaseOptions = releaseOptions
    }

    /// Writes the release of `build` into `staging` through the `ReleaseWriter`, with the
    /// channel's state as the previous release, and plans its upload.
    func stage(_ build: String, table: RouteTable, bytes: Int64, in staging: Staging, forms: ReleaseWriter.Forms = .made) throws -> Staged {
        try refuseUnsigning()
        let digest = ReleaseIndex.tableDigest(table.serialized())
        let (found, forms) = try bases(for: table, digest: digest, forms: forms)
        var baseBytesRead: Int64 = 0
        // Only a carrying publish's forms read the store's patches: other forms make every patch from its base.
        var byName: Set<ReleaseIndex.Patch>? = if case .carrying = forms { [] } else { nil }
        var olds: [FormPublisher.Release] = []
        for (k, old) in found.enumerated() {
            let folder = staging.base(k)
            baseBytesRead += try Bases.materialize(old, for: table, into: folder, routesName: routesName, from: remote, state: state, byName: &byName)
            olds.append(FormPublisher.Release(root: folder, table: old.table, tableBytes: old.tableBytes))
        }
        var writer = try releaseWriter(build, table: table, digest: digest)
        writer.forms = forms
        writer.bases = olds
        writer.heldForms = heldForms
        writer.patchesByName = byName ?? []
        let written = try writer.write(into: staging.release, warn: Output.warn)
        guard written.forms?.index != nil || !forms.isMade else { throw CenariusError.internal("the staged release has no index") }
        let record = try ReleaseRecord(head: written.head.serialized(), published: FileSystem.now(), origin: origin, files: table.count, bytes: bytes)
        var state = state
        if state.isDefaultChannel, state.layoutMatching == nil {
            state.layoutMatching = try LayoutCheck.matching(table, build: build, in: remote, objects: state.objects)
        }
        let plan = try UploadPlan(staging: staging.release, build: build, table: table, record: record,
                                  remote: state, pointerMaxAge: pointerMaxAge)
        let formsFrom = switch forms {
        case .stored: "store"
        case .remade: written.forms?.reusedPacks == true ? "reused" : "made"
        case .made: "made"
        case .carrying: written.forms?.carriedPack == true ? "carried" : "made"
        }
        return Staged(plan: plan, record: record, baseBytesRead: baseBytesRead, forms: formsFrom)
    }

    /// The releases patches are made from and where the forms come from: the channel's last
    /// releases, and with `carry` the pack its head carries, whose table is a base too.
    private func bases(for table: RouteTable, digest: String, forms: ReleaseWriter.Forms) throws -> ([Bases.Release], ReleaseWriter.Forms) {
        var olds = try forms.isMade ? Bases.releases(of: state, from: remote, excluding: digest, count: patches) : []
        guard carry, case .made = forms, case let (carried, table, index)? = try Bases.carried(by: state, from: remote, known: olds), carried.from != digest else {
            return (olds, forms)
        }
        // The carried pack's table is a base too: the delta pack from it is what a first install adds to the pack.
        if !olds.contains(where: { ReleaseIndex.tableDigest($0.tableBytes) == carried.from }) { olds.append(table) }
        let objects = state.objects
        let remote = remote
        // The head's delta packs from these bases hold most of what a release right after a large one takes again.
        let frames = olds.first { ReleaseIndex.tableDigest($0.tableBytes) == state.head?.table }.map { DeltaFrames(index: index, table: $0.table, olds: olds) }
        let limit = Int(FormPublisher.patchWindowBudget)
        return (olds, .carrying(carried, storeSize: { objects[$0]?.size }, storeRead: { keys in
            (try? frames.map { try $0.read(keys, from: remote, objects: objects, limit: limit) } ?? remote.read(keys, limit: limit)) ?? [:]
        }))
    }

    /// The writer of `build`'s release, hashed now (after the bases were read) and checked against
    /// the table being published, over the channel's latest signature and head (versions keep
    /// growing and a second key co-signs) and the index devices before heads read under this table's hash.
    private func releaseWriter(_ build: String, table: RouteTable, digest: String) throws -> ReleaseWriter {
        let algorithm = table.entries.first?.hash.algorithm ?? ContentHash.Algorithm(rawValue: algorithm) ?? .md5
        let built = try RouteTableBuilder(root: build, routesName: routesName, algorithm: algorithm).build()
        guard ReleaseIndex.tableDigest(built.table.serialized()) == digest else {
            throw CenariusError.integrity("\(build) changed while it was published: run publish again")
        }
        var writer = ReleaseWriter(build: build, built: built)
        writer.routesName = routesName
        writer.channel = channel
        writer.formsAtURI = state.isDefaultChannel
        let legacyIndex = ReleaseIndex.indexPath(table: digest)
        writer.name = name
        writer.previous = previous
        // A stored release's manifest is kept as its exact bytes unless the options ask for another.
        writer.previous.manifest = manifest ?? nil
        writer.previous.legacyIndex = state.objects[legacyIndex] == nil ? nil : try remote.read(legacyIndex, limit: 32 << 20)
        writer.manifest = try releaseOptions.manifest()?.serialized()
        writer.signer = try republishSigner ?? releaseOptions.signer()
        writer.unsigned = releaseOptions.unsigned
        return writer
    }

    /// What the writer's refusals call this release: the channel of the remote.
    private var name: String { "channel \(channel) of \(remote.description)" }

    /// The channel's signatures, for the writer to sign over (versions keep growing, a second key co-signs).
    private var previous: ReleaseWriter.Previous {
        var previous = ReleaseWriter.Previous(sidecar: state.isDefaultChannel ? state.sidecar : state.head?.signature, head: state.head)
        previous.republishedSigned = republishedSigned
        return previous
    }

    /// The writer's refusal of an unsigned release over a signed one, asked before anything is read from the store.
    private func refuseUnsigning() throws {
        try ReleaseWriter.refuseUnsigning(over: previous, signing: !releaseOptions.signKey.isEmpty, unsigned: releaseOptions.unsigned, name: name)
    }

    /// Uploads the plan under `lock`, with a progress bar on a terminal; stops before the layout
    /// and the head if the head is no longer the one this release was staged on.
    func upload(_ plan: UploadPlan, json: Bool, lock: any PublishLock) throws {
        let bar = ProgressBar.make("publishing", json: json)
        defer { bar?.finish() }
        let check = PlanRunner.Guard(lock: lock, headKey: state.headKey, head: state.headBytes)
        try PlanRunner.run(plan, to: remote, guard: check, before: { TestPause.at($0.rawValue) }) { progress in
            bar?.update(TransferProgress(filesDone: progress.done, filesTotal: progress.total, bytes: progress.bytes))
        }
    }

    /// A stored release of this remote, republished to `state`'s channel under a new version
    /// (rollback, promote, halt, resume): rebuilt from the store into `staging`, then staged as a build.
    func republish(_ head: ReleaseHead, manifest: [UInt8]?, from source: any Destination, in staging: Staging) throws -> Staged {
        var publication = self
        publication.republishedSigned = head.signature != nil
        try publication.refuseUnsigning()
        let parts = try StoredRelease.parts(of: head, from: source)
        let build = staging.root + "/build"
        // The forms as the store holds them, handed to the writer: read, not compressed again.
        var held: [String: [UInt8]] = [:]
        _ = try StoredRelease.materialize(parts, from: source, into: build) { held[$0] = $1 }
        publication.heldForms = held
        publication.manifest = .some(manifest)
        publication.republishSigner = try inheritedSigner()
        let bytes = parts.table.entries.reduce(Int64(0)) { $0 + ($1.size ?? 0) }
        return try publication.stage(build, table: parts.table, bytes: bytes, in: staging,
                                     forms: storedForms(head, parts: parts, from: source))
    }

    /// The store's forms when the channel's head already names this table and index (halt,
    /// resume, a promotion to a channel on that release) and the store holds everything the
    /// index names: its devices hold the table, so new packs would bring them nothing. Another
    /// table (rollback, promotion): what the store holds for it taken as it is, and only patches
    /// and delta packs from the channel's last releases made. Made whole when the store lacks some.
    private func storedForms(_ head: ReleaseHead, parts: StoredRelease.Parts, from source: any Destination) throws -> ReleaseWriter.Forms {
        let objects = state.objects
        // Without `storedPlain`, a plain file is at its uri and in a pack, not under `f/` (FormPublisher.formsAtURI).
        let needed = parts.index.objects(for: parts.table).filter { parts.index.storedPlain || !$0.hasPrefix(ReleaseIndex.folder + "/f/") }
        guard needed.allSatisfy({ objects[$0] != nil }) else { return .made }
        guard let current = state.head, current.table == head.table, current.index == head.index else {
            return .remade(earlier: parts.index, storeHolds: { objects[$0] != nil })
        }
        guard let form = head.tableForm else { return .stored(index: parts.indexBytes, tableForm: nil) }
        guard let bytes = try source.read(ReleaseHead.tableFormPath(form), limit: 64 << 20), ReleaseIndex.tableDigest(bytes) == form else { return .made }
        return .stored(index: parts.indexBytes, tableForm: bytes)
    }
}

/// A private folder for a release being staged and the bases it patches from; removed after.
struct Staging {
    let root: String
    var release: String { root + "/release" }
    func base(_ k: Int) -> String { root + "/base-\(k)" }

    init() throws(CenariusError) {
        let parent = ProcessEnvironment()["TMPDIR"] ?? "/tmp"
        var template = Array((parent + "/cenariusd-publish-XXXXXX").utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw FileSystem.failure("cannot make a staging folder in", parent)
        }
        root = String(cString: made)
        try FileSystem.makeDirectories(release)
    }

    func remove() { FileSystem.removeTree(root) }
}

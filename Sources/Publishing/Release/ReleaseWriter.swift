package import RouteSync

/// One release of a build folder, written into a folder from values: the build's table, the
/// channel's previous state as bytes (sidecar, head, manifest, the index under the table's hash),
/// the keys, the manifest, where the forms come from and the bases patches are made from. It is
/// what `routes` writes into a folder and what `publish`, `promote`, `rollback`, `halt`/`resume`
/// and `fleet --halt-above` stage for the upload plan: the table, the manifest, the forms, the
/// signature and, last, the head. It reads nothing of the previous release from the folder it
/// writes and says nothing itself: warnings go to the caller's sink, facts come back in `Release`.
package struct ReleaseWriter {
    /// The build folder the table describes (its files are read for the forms).
    package var build: String
    package var built: RouteTableBuilder.Result
    /// The table's exact bytes as a folder holds them (`fleet --halt-above` in place: the table
    /// devices hold, never one rebuilt from files that may have changed since); nil: the built table's.
    package var tableBytes: [UInt8]?
    package var routesName = "Routes.json"
    package var channel = ReleaseHead.defaultChannel
    /// What the refusal of an unsigned release calls its place (`publish`: the channel of the
    /// remote); nil: the folder written into, with the channel when it is not the default.
    package var name: String?
    package var previous = Previous()
    /// The manifest the release options ask for, written and signed; nil: the previous one stays in force.
    package var manifest: [UInt8]?
    /// Nil: unsigned, which over a signed channel needs `unsigned` (on purpose).
    package var signer: ReleaseSigner?
    package var unsigned = false
    /// Nil: no forms (`routes` without `--compress`).
    package var forms: Forms?
    /// Earlier releases patches are made from (`--delta-from`, the channel's last releases).
    package var bases: [FormPublisher.Release] = []
    /// Forms already read from the store (a republish's), taken as they are (FormPublisher.heldForms).
    package var heldForms: [String: [UInt8]] = [:]
    /// Patches the store holds, taken by their names without their bases (FormPublisher.patchesByName).
    package var patchesByName: Set<ReleaseIndex.Patch> = []
    /// The release's files are uploaded at their uris too (the default channel, FormPublisher.formsAtURI).
    package var formsAtURI = false
    /// Runs with the head once everything it names is written and before it is: what must be in
    /// place before devices can see the release (its release record, in place).
    package var beforeHead: ((ReleaseHead) throws(CenariusError) -> Void)?

    package init(build: String, built: RouteTableBuilder.Result) {
        self.build = build
        self.built = built
    }

    /// What the channel held before this release, as bytes: versions keep growing from them,
    /// a second key co-signs them, a manifest not asked for again is theirs.
    package struct Previous {
        package var sidecar: [UInt8]?
        package var head: ReleaseHead?
        package var manifest: [UInt8]?
        /// The index under this table's hash, written once: a table published before keeps it and is signed over it.
        package var legacyIndex: [UInt8]?
        /// The release republished was signed (a promotion from a signed channel): dropping its
        /// signature is as much on purpose as unsigning the channel.
        package var republishedSigned = false

        /// Devices that hold a public key trust what came before: a release without a key over it needs `unsigned`.
        package var isSigned: Bool { head?.signature != nil || sidecar != nil || republishedSigned }

        package init(sidecar: [UInt8]? = nil, head: ReleaseHead? = nil, manifest: [UInt8]? = nil, legacyIndex: [UInt8]? = nil) {
            self.sidecar = sidecar
            self.head = head
            self.manifest = manifest
            self.legacyIndex = legacyIndex
        }
    }

    /// What was written, for the upload plan and for the command's words.
    package struct Release {
        package var tablePath: String
        package var table: [UInt8]
        package var manifest: [UInt8]?
        /// The previous manifest was kept (none asked for).
        package var manifestKept = false
        package var forms: FormPublisher.Summary?
        package var sidecarPath: String
        package var signed: ReleaseSigner.Signed?
        package var headPath: String
        package var head: ReleaseHead
    }

    /// Writes the release into `root` (made if missing); nothing outside it is written.
    package func write(into root: String, warn: (String) -> Void) throws(CenariusError) -> Release {
        let tablePath = FileSystem.join(root, routesName)
        try Self.refuseUnsigning(over: previous, signing: signer != nil, unsigned: unsigned,
                                 name: name ?? (channel == ReleaseHead.defaultChannel ? root : "channel \(channel) of \(root)"))
        // Unsigned on purpose: the old signature goes too.
        if signer == nil, previous.isSigned { FileSystem.removeTree(tablePath + ".sig") }
        try FileSystem.makeDirectories(root)
        let table = tableBytes ?? built.table.serialized()
        try FileSystem.writeAtomically(table, to: tablePath)
        let manifest = try writeManifest(beside: tablePath)
        let forms = try writeForms(table: table, root: root)
        try Self.removeTableForm(root: root, routesName: routesName, warn: warn)
        let signed = try signer.map { signer throws(CenariusError) in
            try signer.sign(table: table, manifest: manifest, index: forms.legacyIndex, over: .init(path: tablePath + ".sig", previous: previous.sidecar), warn: warn)
        }
        if let signed { try FileSystem.writeAtomically(signed.signature.serialized(), to: tablePath + ".sig") }
        // Last: the one name devices poll, naming only what is already written.
        var heads = HeadWriter(directory: root, routesName: routesName, channel: channel, previous: previous.head)
        heads.keys = signer?.keys ?? []
        let head = try heads.make(.init(table: table, manifest: manifest, index: forms.index, tableForm: forms.tableForm, bases: forms.bases),
                                  signed: signed?.signature)
        try beforeHead?(head)
        try heads.commit(head)
        return Release(tablePath: tablePath, table: table, manifest: manifest, manifestKept: self.manifest == nil && manifest != nil,
                       forms: forms.summary, sidecarPath: tablePath + ".sig", signed: signed, headPath: heads.headPath, head: head)
    }

    /// The manifest asked for, else the previous one (a manifest stays in force for the next
    /// table and is signed with it), beside the table.
    private func writeManifest(beside tablePath: String) throws(CenariusError) -> [UInt8]? {
        guard let bytes = manifest ?? previous.manifest else { return nil }
        let path = tablePath + ".release"
        if manifest != nil || (try? FileSystem.readFile(path, limit: 64 << 10)) != bytes { try FileSystem.writeAtomically(bytes, to: path) }
        return bytes
    }

    /// A release written without a key over a signed one would be refused by every device that
    /// holds a public key: only on purpose (`unsigned`). The one refusal, in the words every
    /// command uses; `publish` asks before it reads anything from the store.
    package static func refuseUnsigning(over previous: Previous, signing: Bool, unsigned: Bool, name: String) throws(CenariusError) {
        guard !signing, !unsigned, previous.isSigned else { return }
        throw .usage("\(name) is signed: pass --sign-key (devices that hold a public key refuse an unsigned head), or --unsigned to stop signing it on purpose")
    }

    /// An earlier version's compressed table beside the release, at its one mutable name under `_cenarius/`.
    package static func legacyTableFormPath(root: String, routesName: String) -> String {
        FileSystem.join(root, ReleaseIndex.tablePath(routesName))
    }

    /// No run leaves the compressed table of an earlier version's `--compress` behind: devices that
    /// saw it poll it instead of the table, and would stay on that release. The head names the
    /// compressed table by its hash now.
    private static func removeTableForm(root: String, routesName: String, warn: (String) -> Void) throws(CenariusError) {
        let path = legacyTableFormPath(root: root, routesName: routesName)
        guard FileSystem.exists(path) else { return }
        FileSystem.removeTree(path)
        guard !FileSystem.exists(path) else { throw FileSystem.failure("cannot remove the stale compressed table", path) }
        warn("removed \(path), an earlier version's compressed table: devices poll the head now, and devices that predate heads the table itself")
    }
}

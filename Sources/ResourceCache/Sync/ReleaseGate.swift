import RouteSync
import Transport

/// Where a release's word is taken (G8, docs/threats.md): every head and sidecar a sync meets is
/// checked here before anything it says is recorded, and this is the only writer of what a
/// signature vouches for — the trust rotations lead to (`trust.json`), the signed version and
/// expiry of the table in force (its `meta.json`; a new generation's starts from what `accept`
/// returned), and the highest head version seen (`head.json`'s `version`). With keys configured,
/// only a key holder moves any of them: a head that is unsigned, badly signed or signed by a
/// stranger changes none, whatever version it says. Without keys a device trusts its remote as
/// served, and a head's version is taken as it is.
///
/// It does no I/O: the run fetches (a head, a sidecar) and hands the bytes over, as python-tuf's
/// updater does with its trusted set. The held-back release and the refusal of a reused signed
/// version are still checked in the offer, beside the table they compare.
struct ReleaseGate {
    let verifier: TableSignatureVerifier?
    let layout: CacheLayout
    let effects: SyncEffects?
    /// Its clock judges expiry (the tests' clock hook moves it too).
    let rollout: RolloutSettings

    init(_ settings: SyncSettings) {
        verifier = settings.tableVerifier
        layout = settings.cache
        effects = settings.effects
        rollout = settings.rollout
    }

    /// Whether this device takes only signed releases.
    var signs: Bool { verifier != nil }

    /// A head's signature, over the table, the manifest, the index and the channel, with the trust
    /// this device's rotations left, its version the head's; nil without keys.
    /// - Parameter inForce: the signed version of the table in force, below which nothing is taken.
    func accept(head: ReleaseHead, table: [UInt8], index: [UInt8]?, remote: Remote,
                inForce: Int64?) throws(CenariusError) -> TableSignatureVerifier.Verified? {
        guard let verifier else { return nil }
        guard let signature = head.signature else { throw .integrity("\(remote.headURL) is not signed but a public key is configured") }
        let trust = try TrustStore(layout: layout).read()
        let verified = try verifier.check(sidecar: signature, files: head.signedFiles(table: table, index: index), source: remote.headURL,
                                          sidecarSource: remote.headURL, standing: .init(inForce: inForce, trust: trust, now: rollout.now()))
        guard verified.version == head.version else {
            throw .integrity("\(remote.headURL) says version \(head.version) but is signed as version \(verified.version)")
        }
        try keep(verified.trust, over: trust)
        return verified
    }

    /// Whether the table whose SHA-256 is `digest` is the release this device rolled back from
    /// (held-back holds that digest, which a head names): nothing is fetched for it.
    func holdsBack(table digest: String) -> Bool {
        ReleaseStore(layout: layout).read().heldBack == digest
    }

    /// A sidecar already fetched, checked against `files` by role.
    func accept(sidecar: [UInt8], files: [String: [UInt8]], remote: Remote, inForce: Int64?) throws(CenariusError) -> TableSignatureVerifier.Verified? {
        guard let verifier else { return nil }
        let trust = try TrustStore(layout: layout).read()
        let verified = try verifier.check(sidecar: sidecar, files: files, source: remote.tableURL, sidecarSource: remote.signatureURL,
                                          standing: .init(inForce: inForce, trust: trust, now: rollout.now()))
        try keep(verified.trust, over: trust)
        return verified
    }

    /// The release index of `table`, if a device may use it (`ReleaseIndexLoader.check`): with keys,
    /// only one the table's verified signature covers.
    func accept(index: [UInt8], table: [UInt8], signed: TableSignatureVerifier.Verified?) -> ReleaseIndex? {
        ReleaseIndexLoader.check(index, table: table, signed: signed, verifier: verifier)
    }

    /// The table in force signed again (a later expiry): recorded when it is newer than the
    /// signature its generation holds. Only a verified signature reaches here.
    func keep(_ verified: TableSignatureVerifier.Verified, for generation: Generation, meta: GenerationMeta) throws(CenariusError) {
        guard verified.version > (meta.signedVersion ?? 0) else { return }
        var meta = meta
        meta.signedVersion = verified.version
        meta.signedAt = verified.signedAt
        meta.signatureExpires = verified.expires
        try record(meta, of: generation)
    }

    /// The one writer of the generation in force's `meta.json` (a new generation's is built with
    /// it): the effect announced, then the record replaced whole.
    func record(_ meta: GenerationMeta, of generation: Generation) throws(CenariusError) {
        effects?.before(.metaRefreshed)
        try FileSystem.writeAtomically(meta.encoded(), to: generation.metaPath)
    }

    /// Records `head`'s version as the highest seen. With keys, only a head this gate verified
    /// moves it (`verified` is what `accept(head:)` returned for it); without, any head does.
    func see(_ head: ReleaseHead, verified: TableSignatureVerifier.Verified?, in state: inout HeadState) {
        guard !signs || verified?.version == head.version else { return }
        state.version = max(state.version, head.version)
    }

    /// Rotations followed: written, the effect announced, only when they changed the trust.
    private func keep(_ trust: TrustState, over previous: TrustState) throws(CenariusError) {
        guard trust != previous else { return }
        effects?.before(.trust)
        try TrustStore(layout: layout).write(trust)
    }
}

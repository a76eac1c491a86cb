package import RouteSync

extension ReleaseWriter {
    /// Where a release's forms come from.
    package enum Forms {
        /// Made from the folder (`--compress`, `--delta-from`): every file compressed, packs, patches.
        case made
        /// Made, taking what a store already holds for this table as it is (`earlier`'s packs and
        /// patches, the forms in the folder): a rollback or promotion makes only patches and delta
        /// packs from the channel's last releases.
        case remade(earlier: ReleaseIndex, storeHolds: (String) -> Bool)
        /// The store's, as a head names them: a republish of the table a channel's head already
        /// names (halt, resume) writes pointers only, in a moment whatever the site's size.
        case stored(index: [UInt8], tableForm: [UInt8]?)
        /// Made, with an earlier solid pack carried forward while the delta pack from its table
        /// stays small (`publish`): files the store and every base release hold are not compressed again.
        /// `storeSize`: the size the store's listing gives a key, nil when it lacks it.
        case carrying(FormPublisher.Carry, storeSize: (String) -> Int64?, storeRead: ([String]) -> [String: [UInt8]])

        package var isMade: Bool {
            if case .stored = self { return false }
            return true
        }
    }

    /// What the forms step leaves for the signature and the head.
    struct WrittenForms {
        var index: [UInt8]?
        /// What the sidecar vouches for: the index under the table's hash, which devices that predate
        /// heads read (written once, so for a table published before it is that earlier index).
        var legacyIndex: [UInt8]?
        var tableForm: [UInt8]?
        var bases: [[UInt8]] = []
        var summary: FormPublisher.Summary?
    }

    func writeForms(table bytes: [UInt8], root: String) throws(CenariusError) -> WrittenForms {
        let digest = ReleaseIndex.tableDigest(bytes)
        // Written before the forms, which keep an index already under this table's hash.
        if let earlier = previous.legacyIndex { _ = try FormPublisher.writeLegacyIndex(earlier, table: digest, root: root) }
        switch forms {
        case nil:
            // No forms made: what the sidecar vouched for under the table's hash stays vouched for.
            return WrittenForms(legacyIndex: previous.legacyIndex)
        case .stored(let index, let tableForm)?:
            return WrittenForms(index: index, legacyIndex: try FormPublisher.writeLegacyIndex(index, table: digest, root: root), tableForm: tableForm)
        case let source?:
            let published = try publisher(table: bytes, root: root, source: source).publish()
            return WrittenForms(index: published.index, legacyIndex: published.legacyIndex, tableForm: published.tableForm,
                                bases: bases.map(\.tableBytes), summary: published.summary)
        }
    }

    private func publisher(table bytes: [UInt8], root: String, source: Forms) -> FormPublisher {
        var publisher = FormPublisher(release: .init(root: build, table: built.table), tableBytes: bytes, olds: bases)
        publisher.routesName = routesName
        publisher.outputRoot = root
        publisher.formsAtURI = formsAtURI
        publisher.heldForms = heldForms
        publisher.patchesByName = patchesByName
        if case .remade(let earlier, let storeHolds) = source {
            publisher.reusing = earlier
            publisher.storeHolds = storeHolds
        }
        if case .carrying(let carry, let storeSize, let storeRead) = source {
            publisher.carry = carry
            publisher.storeHolds = { storeSize($0) != nil }
            publisher.storeSize = storeSize
            publisher.storeRead = storeRead
        }
        // The head is the writer's, written last.
        publisher.head = true
        return publisher
    }
}

extension FormPublisher {
    /// One `publish()` under way: what it takes from the store and earlier runs as it is (read
    /// once, before any file), the packs being written, and the index and summary so far.
    struct Run {
        let root: String
        let folder: String
        let algorithm: ContentHash.Algorithm
        /// The table's files in pack order.
        let files: [RouteEntry]
        /// Whether the output root or the store holds an object (a relative key), or it was read from the store (`heldForms`).
        let holds: (String) -> Bool
        /// An earlier index over this same table, whose packs and patches the store may still hold.
        let earlier: ReleaseIndex?
        let reusedPack: ReleaseIndex.Pack?
        let reusedSolid: ReleaseIndex.Pack?
        /// A release that carried a pack (a rollback to it) carries it again, with its delta pack from that pack's table.
        let reusedCarried: ReleaseIndex.CarriedPack?
        /// Which of `olds` is the carried pack's table.
        let carriedFrom: Int?
        /// No pack is made while the files go by, and files the store and every OLD hold are not compressed again.
        let carrying: Bool
        let formsAtURI: Bool
        let matches: [BaseMatch]
        let oldSets: [Set<ContentHash>]
        let siteBytes: Int64
        /// A pack of this very table is made or taken as it is: files it holds may stay at their uris alone.
        let packsHoldAll: Bool
        var index: ReleaseIndex
        var summary = Summary()
        var patched = Set<ReleaseIndex.Patch>()
        var pack: PackWriter?
        /// Per OLD, the frames a device holding it needs, in one file: a release in one request.
        var deltas: [PackWriter] = []
        /// The solid pack's files, kept while the site fits in memory (SolidPack.maxContent).
        var solid: [[UInt8]]?
        var solidBytes = 0
        var solidMade: Pending<[UInt8]>?
        /// Files given no object of their own: a pack holds them and the store has them at their uris.
        var atURI: [RouteEntry] = []
        /// Bytes of the compressed forms this run wrote or found (ReleaseIndex.formSizes).
        var formBytes: [ContentHash: Int64] = [:]

        init(_ publisher: FormPublisher) throws(CenariusError) {
            let root = publisher.outputRoot ?? publisher.release.root
            self.root = root
            folder = FileSystem.join(root, ReleaseIndex.folder)
            for sub in ["z", "p", "f", "pack", "index"] { try FileSystem.makeDirectories(folder + "/" + sub) }
            algorithm = publisher.release.table.entries.first?.hash.algorithm ?? .md5
            matches = publisher.olds.map { BaseMatch($0.table) }
            let table = ReleaseIndex.tableDigest(publisher.tableBytes)
            index = ReleaseIndex(table: table)
            let storeHolds = publisher.storeHolds
            let held = publisher.heldForms
            let holds = { (key: String) in
                FileSystem.regularFileSize(FileSystem.join(root, key)) != nil || held[key] != nil || storeHolds?(key) == true
            }
            self.holds = holds
            let earlier = (publisher.reusing ?? Self.indexWritten(table: table, root: root)).flatMap { $0.table == table ? $0 : nil }
            self.earlier = earlier
            files = publisher.release.table.packOrder
            let count = files.count
            reusedPack = earlier?.pack.flatMap { $0.files == count && holds(ReleaseIndex.packPath($0.hash)) ? $0 : nil }
            let reusedSolid = earlier?.solidPack.flatMap { $0.files == count && holds(ReleaseIndex.packPath($0.hash)) ? $0 : nil }
            self.reusedSolid = reusedSolid
            let reusedCarried = reusedSolid != nil ? nil : earlier.flatMap { earlier in
                earlier.carriedPack.flatMap { carried in
                    holds(ReleaseIndex.packPath(carried.pack.hash)) && earlier.deltaPacks.allSatisfy({ $0.from != carried.from || holds(ReleaseIndex.packPath($0.hash)) }) ? carried : nil
                }
            }
            self.reusedCarried = reusedCarried
            var patched = Set<ReleaseIndex.Patch>()
            for pair in earlier?.patches ?? [] where holds(ReleaseIndex.patchPath(pair)) && patched.insert(pair).inserted {
                index.addPatch(pair, size: earlier?.patchSize(pair) ?? 0)
            }
            self.patched = patched
            let carriedFrom = publisher.carry.flatMap { carry in publisher.olds.firstIndex { ReleaseIndex.tableDigest($0.tableBytes) == carry.from } }
            self.carriedFrom = carriedFrom
            let carrying = carriedFrom != nil && (publisher.carry?.releases ?? .max) < Carry.maxReleases && reusedSolid == nil && reusedCarried == nil && count > 0
            self.carrying = carrying
            let fresh = !carrying && reusedCarried == nil
            pack = reusedPack == nil && fresh ? try PackWriter(folder: folder, name: "all", algorithm: algorithm) : nil
            for i in publisher.olds.indices { deltas.append(try PackWriter(folder: folder, name: "\(i)", algorithm: algorithm)) }
            oldSets = publisher.olds.map { Set($0.table.entries.map(\.hash)) }
            let solid: [[UInt8]]? = reusedSolid == nil && fresh ? [] : nil
            self.solid = solid
            let siteBytes = files.reduce(Int64(0)) { $0 + ($1.size ?? Int64(SolidPack.maxContent)) }
            self.siteBytes = siteBytes
            formsAtURI = publisher.formsAtURI
            packsHoldAll = publisher.formsAtURI && fresh && (reusedSolid != nil || solid != nil && siteBytes <= SolidPack.maxContent)
        }

        /// The index an earlier run wrote under the table's hash in the output root.
        private static func indexWritten(table: String, root: String) -> ReleaseIndex? {
            let key = ReleaseIndex.indexPath(table: table)
            return try? ReleaseIndex.parse(FileSystem.readFile(FileSystem.join(root, key), limit: 32 << 20), source: key)
        }

        /// A file that the store holds in a pack alone: in this table's solid pack, or, for a release
        /// that carried one (a rollback to it), where the earlier index of this table said it was.
        func packedAlone(_ hash: ContentHash) -> Bool {
            !holds(ReleaseIndex.formPath(hash))
                && (packsHoldAll || formsAtURI && reusedCarried != nil && earlier?.storedPlain == false && earlier?.plain.contains(hash) == true)
        }

        /// A file the store and every OLD hold while a pack is carried: listed as the store has it,
        /// not compressed again (true); false: it needs a form after all.
        mutating func takeCarried(_ entry: RouteEntry) -> Bool {
            if holds(ReleaseIndex.formPath(entry.hash)) { return true }
            if holds(ReleaseIndex.plainPath(entry.hash)) {
                index.plain.insert(entry.hash)
                return true
            }
            guard formsAtURI else { return false }
            // The carried pack, whose table is one of `olds`, holds it.
            index.plain.insert(entry.hash)
            atURI.append(entry)
            return true
        }
    }
}

package import RouteSync
#if canImport(Glibc)
import Glibc
#endif

/// `cenariusd verify`: re-hashes every object in the cache and every preset file the preset's
/// table lists, and checks that the current generation holds what its table needs.
package struct Verifier: Sendable {
    package let settings: SyncSettings

    package init(settings: SyncSettings) {
        self.settings = settings
    }

    package struct Report: Sendable, Codable {
        package var objects = 0
        package var objectBytes: Int64 = 0
        package var corruptObjects: [String] = []
        package var generation: Int?
        package var missingInGeneration: [String] = []
        package var presetFiles = 0
        package var presetMismatched: [String] = []
        package var presetMissing: [String] = []
        package var temporaries = 0

        package var isClean: Bool { corruptObjects.isEmpty && missingInGeneration.isEmpty && presetMismatched.isEmpty }
    }

    package func verify() throws(CenariusError) -> Report {
        var report = Report()
        let layout = settings.cache
        let hasher = BatchHasher()
        let objects = ObjectStore(layout: layout).all()
        for ((hash, _), (actual, size)) in zip(objects, try hasher.hashAll(objects.map { ($0.1, $0.0.algorithm) })) {
            report.objects += 1
            report.objectBytes += size
            if actual != hash { report.corruptObjects.append(hash.hex) }
        }
        report.temporaries = FileSystem.listDirectory(layout.tmp).count
        let presetTable = try settings.preset.table()
        if let generation = GenerationStore(layout: layout).current() {
            report.generation = generation.number
            let table = try generation.table()
            for entry in table.entries {
                let servedByPreset = settings.preset.file(for: entry, in: presetTable) != nil
                if !servedByPreset && FileSystem.regularFileSize(generation.filePath(entry.uri)) == nil {
                    report.missingInGeneration.append(entry.uri.value)
                }
            }
        }
        var present: [(entry: RouteEntry, path: String)] = []
        for entry in presetTable.entries {
            guard let path = settings.preset.folder.file(entry.uri) else {
                report.presetMissing.append(entry.uri.value)
                continue
            }
            present.append((entry, path))
        }
        report.presetFiles = present.count
        for (file, (actual, _)) in zip(present, try hasher.hashAll(present.map { ($0.path, $0.entry.hash.algorithm) })) where actual != file.entry.hash {
            report.presetMismatched.append(file.entry.uri.value)
        }
        return report
    }
}

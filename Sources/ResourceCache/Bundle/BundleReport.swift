#if canImport(Glibc)
import Glibc
#endif
import ReportHeader
import RouteSync

/// The report a device leaves beside a bundle it imported (docs/bundles.md): one JSON line in the
/// shape of an access log's (`time`, and `report` the `Cenarius-Report` value a poll would carry,
/// `why` code included), so that `fleet` counts a stick's reports as it counts a log. Signed by
/// nothing, named by the device's hashed id and the time, created with `O_EXCL`: another device's
/// report, or this device's earlier one, is never written over. A read-only or full stick is a
/// warning for the caller, never a failed import.
enum BundleReport {
    static let folderName = "cenarius-reports"

    /// The line for `header` (the report's value) at `time`, with the import's outcome beside it.
    static func line(header: String, time: Double, bundle: String, outcome: String, error: CenariusError?) -> [UInt8] {
        var parts = ["\"time\":\"\(Whole.text(time.rounded(.down)))\(millis(time))\"", "\"report\":\(JSONText.quoted(header))",
                     "\"bundle\":\(JSONText.quoted(bundle))", "\"outcome\":\(JSONText.quoted(outcome))"]
        if let error { parts += ["\"error\":\(error.code.rawValue)", "\"desc\":\"\(error.code.name)\""] }
        return Array(("{" + parts.joined(separator: ",") + "}\n").utf8)
    }

    private static func millis(_ time: Double) -> String {
        let ms = Int(((time - time.rounded(.down)) * 1000).rounded(.down))
        return "." + String(repeating: "0", count: 3 - String(ms).count) + String(ms)
    }

    /// Writes the line into `folder` (made when missing) as `<device>-<seconds>.json`; the file's path.
    static func write(_ line: [UInt8], device: String, time: Double, into folder: String) throws(CenariusError) -> String {
        if mkdir(folder, 0o755) != 0 && errno != EEXIST { throw full(folder) ?? FileSystem.failure("cannot create", folder) }
        // A link planted where the folder belongs is not followed.
        let dir = open(folder, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard dir >= 0 else { throw FileSystem.failure("cannot open", folder) }
        defer { close(dir) }
        let stem = "\(device)-\(Whole.text(time.rounded(.down)))"
        for n in 1...100 {
            let name = n == 1 ? stem + ".json" : "\(stem)-\(n).json"
            let fd = openat(dir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
            if fd < 0 && errno == EEXIST { continue }
            guard fd >= 0 else { throw full(folder) ?? FileSystem.failure("cannot create", folder + "/" + name) }
            let ok = FileSystem.writeAll(fd, line) && fsync(fd) == 0
            let code = errno
            close(fd)
            guard ok else {
                // A partial report would read as a damaged line: none at all says more.
                unlinkat(dir, name, 0)
                throw FileSystem.failure("cannot write", folder + "/" + name, code)
            }
            return folder + "/" + name
        }
        throw .storage("\(folder) already holds 100 reports of this device for this second")
    }

    /// A full stick, said as such: FAT through FUSE answers a full disk's mkdir with EPERM.
    private static func full(_ folder: String) -> CenariusError? {
        var space = statvfs()
        guard statvfs(FileSystem.parentDirectory(of: folder), &space) == 0, space.f_bavail == 0 else { return nil }
        return .storage("cannot write into \(folder): no space left on the stick")
    }
}

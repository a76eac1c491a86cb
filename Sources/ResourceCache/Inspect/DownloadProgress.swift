import RouteSync
import Transport
#if canImport(Glibc)
import Glibc
#endif

/// A sync fetching a release, as `why` sees it from another process: written when the stage
/// starts to download, rewritten at most once a second, removed when the stage ends. A record
/// whose writer no longer holds the cache's lock (killed mid-download) is not a download.
package struct DownloadProgress: Sendable, Codable, Equatable {
    package var release: String
    package var pid: Int32
    package var since: Double
    package var filesDone = 0
    package var filesTotal: Int
    package var bytes: Int64 = 0
    /// The sum of the table's sizes for the files to fetch, when it gives them all.
    package var expectedBytes: Int64?

    /// The running download, if one is.
    package static func read(_ layout: CacheLayout) -> DownloadProgress? {
        guard let record = JSONFile.read(DownloadProgress.self, layout.downloading),
              WriterLock.holder(layout.lock) == record.pid, kill(record.pid, 0) == 0 || errno == EPERM else { return nil }
        return record
    }

    /// Keeps the record while a stage downloads.
    final class Recorder {
        private var record: DownloadProgress
        private let path: String
        private var written = 0.0

        init(layout: CacheLayout, release: String, files: Int, expectedBytes: Int64?) {
            record = DownloadProgress(release: release, pid: getpid(), since: FileSystem.now(), filesTotal: files,
                                      expectedBytes: expectedBytes == .max ? nil : expectedBytes)
            path = layout.downloading
            write()
        }

        func update(_ progress: TransferProgress) {
            record.filesDone = progress.filesDone
            record.bytes = progress.bytes
            if FileSystem.monotonic() - written >= 1 { write() }
        }

        func end() {
            unlink(path)
        }

        private func write() {
            written = FileSystem.monotonic()
            try? JSONFile.write(record, to: path, durable: false)
        }
    }
}

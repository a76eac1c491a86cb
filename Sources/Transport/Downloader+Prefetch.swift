package import RouteSync

/// Large objects fetched beside a sync's other requests (B8 v2): the pack a head names starts
/// while the table and the checks that decide whether it is wanted take their round trip, and a
/// first install opens the pack's connections while the head is on its way. Each is a
/// SlicedDownload; whoever needs the object takes it over (`sliced`), and what nobody took is
/// stopped and removed with the downloader.
extension Downloader {
    /// Opens connections to `url`'s origin now, for the next large object. `cancel`: the sync's,
    /// which stops them and what they carry.
    package func warmForPrefetch(_ url: String, cancel: CancelToken?) {
        guard warmed == nil else { return }
        warmed = SlicedDownload(options: options, warming: url, cancel: cancel)
    }

    /// Starts fetching `job` in slices, on the connections warmed for it if there are some.
    package func prefetch(_ job: SlicedDownload.Job, cancel: CancelToken?) {
        guard prefetched[job.url] == nil else { return }
        prefetched[job.url] = start(job, cancel: cancel)
    }

    /// The download of `job`'s object: the one prefetched, else one started now. `cancel` stops
    /// one started now (a prefetch is stopped with the downloader).
    package func sliced(_ job: SlicedDownload.Job, cancel: CancelToken?) -> (download: SlicedDownload, file: GrowingFile) {
        prefetched.removeValue(forKey: job.url) ?? start(job, cancel: cancel)
    }

    /// `job` on the connections warmed for the next large object, else on new ones.
    private func start(_ job: SlicedDownload.Job, cancel: CancelToken?) -> (download: SlicedDownload, file: GrowingFile) {
        let download = warmed ?? SlicedDownload(options: options, cancel: cancel)
        warmed = nil
        return (download, download.start(job))
    }

    /// Whether `url` is being prefetched: the pack then comes from the prefetch, whatever its size.
    package func isPrefetching(_ url: String) -> Bool { prefetched[url] != nil }

    /// Stops what was prefetched and not taken, and removes its files.
    package func abandonPrefetches() {
        for (download, _) in prefetched.values { download.abandon() }
        prefetched = [:]
        warmed?.abandon()
        warmed = nil
    }
}

import RouteSync
import CCurl

/// Redirects, followed by the download loop rather than by libcurl so that each hop decides
/// again whether `--header` values may go along (only to the remotes' hosts), and so that a
/// redirect can never leave http(s) (G5).
enum Redirects {
    static let limit = 5

    /// The absolute target of a 3xx answer, as libcurl resolved it against the request's URL.
    static func target(of handle: UnsafeMutableRawPointer, status: Int) -> String? {
        guard [301, 302, 303, 307, 308].contains(status) else { return nil }
        var location: UnsafePointer<CChar>?
        guard ccurl_getinfo_string(handle, CURLINFO_REDIRECT_URL, &location) == CURLE_OK, let location else { return nil }
        return String(cString: location)
    }

    /// Points the transfer at `target` for its next attempt (not counted as one).
    static func follow(_ transfer: Transfer, to target: String) -> Result<Void, CenariusError> {
        let lower = target.lowercased()
        guard lower.hasPrefix("http://") || lower.hasPrefix("https://") else {
            return .failure(.remote("\(transfer.label): redirect from \(transfer.url) to \(target) refused: only http and https"))
        }
        guard transfer.redirects < limit else {
            return .failure(.remote("\(transfer.label): more than \(limit) redirects from \(transfer.url)"))
        }
        transfer.redirects += 1
        transfer.attempt -= 1
        transfer.url = target
        transfer.resumeValidator = nil
        transfer.discardPartial()
        return .success(())
    }
}

package import RouteSync
import CCurl

/// One POST of a small body through libcurl, blocking: the daemon's event reports (`--report-url`).
/// The transport settings apply as they do to the remotes: `--cacert`, the client certificate,
/// the user agent and timeouts; `--header` only when the URL's host is one of the remotes' hosts
/// (the same rule that keeps them from a redirect's host). Redirects are not followed: a report
/// that is redirected is not acknowledged.
package enum HTTPPost {
    /// The status code the server answered, or why there was none.
    package static func send(_ url: String, body: [UInt8], contentType: String, options: TransferOptions) -> Result<Int, CenariusError> {
        guard ccurl_load() != 0 else { return .failure(.internal(String(cString: ccurl_load_error()))) }
        guard let handle = ccurl_easy_init() else { return .failure(.internal("curl_easy_init failed")) }
        var headers: UnsafeMutablePointer<curl_slist>? = ccurl_slist_append(nil, "Content-Type: \(contentType)")
        headers = ccurl_slist_append(headers, "Accept:")
        // libcurl's default for a body over 1 KiB: wait a second for a 100 Continue that small sinks never send.
        headers = ccurl_slist_append(headers, "Expect:")
        if !options.headers.isEmpty, let host = Remote.authority(of: url), options.headerHosts.contains(host) {
            for header in options.headers { headers = ccurl_slist_append(headers, header) }
        }
        defer {
            ccurl_slist_free_all(headers)
            ccurl_easy_cleanup(handle)
        }
        var errorBuffer = [CChar](repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        return body.withUnsafeBytes { bytes in
            errorBuffer.withUnsafeMutableBufferPointer { errors in
                _ = ccurl_setopt_string(handle, CURLOPT_URL, url)
                _ = ccurl_setopt_long(handle, CURLOPT_NOSIGNAL, 1)
                _ = ccurl_setopt_long(handle, CURLOPT_FOLLOWLOCATION, 0)
                _ = ccurl_setopt_string(handle, CURLOPT_PROTOCOLS_STR, "http,https")
                _ = ccurl_setopt_ptr(handle, CURLOPT_ERRORBUFFER, errors.baseAddress)
                _ = ccurl_setopt_long(handle, CURLOPT_POST, 1)
                // The size first: with it libcurl sends exactly these bytes and never looks for a NUL.
                _ = ccurl_setopt_off(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(bytes.count))
                _ = ccurl_setopt_ptr(handle, CURLOPT_POSTFIELDS, UnsafeMutableRawPointer(mutating: bytes.baseAddress))
                _ = ccurl_setopt_slist(handle, CURLOPT_HTTPHEADER, headers)
                _ = ccurl_setopt_string(handle, CURLOPT_USERAGENT, options.userAgent)
                _ = ccurl_setopt_long(handle, CURLOPT_CONNECTTIMEOUT, options.timeout)
                // A whole report takes no longer than connecting may: a sink that hangs is retried later.
                _ = ccurl_setopt_long(handle, CURLOPT_TIMEOUT, options.timeout * 2)
                if let caFile = options.caFile { _ = ccurl_setopt_string(handle, CURLOPT_CAINFO, caFile) }
                if let certificate = options.clientCertificate {
                    _ = ccurl_setopt_string(handle, CURLOPT_SSLCERT, certificate)
                    _ = ccurl_setopt_string(handle, CURLOPT_SSLKEY, options.clientKey ?? certificate)
                }
                // The answer's body is of no use; without a callback libcurl would print it on stdout.
                _ = ccurl_setopt_write_callback(handle) { _, size, count, _ in size * count }
                let code = ccurl_easy_perform(handle)
                guard code == CURLE_OK else {
                    let detail = errors[0] != 0 ? String(cString: errors.baseAddress!) : String(cString: ccurl_easy_strerror(code))
                    return .failure(.remote(detail))
                }
                var status = 0
                _ = ccurl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
                return .success(status)
            }
        }
    }
}

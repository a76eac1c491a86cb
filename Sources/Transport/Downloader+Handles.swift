import RouteSync
import CCurl
#if canImport(Glibc)
import Glibc
#endif

extension Downloader {
    /// An easy handle set up for `transfer` (reused from an earlier transfer when one is idle)
    /// and added to `multi`, with the request headers it owns.
    func start(_ transfer: Transfer, on multi: MultiHandle) -> Result<(UnsafeMutableRawPointer, UnsafeMutablePointer<curl_slist>?), CenariusError> {
        if let refusal = LocalFile.refusal(transfer.url, label: transfer.label) { return .failure(refusal) }
        guard let handle = idleHandles.popLast() ?? ccurl_easy_init() else {
            return .failure(.internal("curl_easy_init failed"))
        }
        let resume = transfer.beginAttempt()
        if let failure = transfer.failure { 
            recycle(handle, nil)
            return .failure(failure)
        }
        transfer.gate = gate
        Self.setCallbacks(handle, for: transfer)
        configureConnection(handle, for: transfer)
        let headers = request(handle, for: transfer, resuming: resume)
        let added = ccurl_multi_add_handle(multi.value, handle)
        guard added == CURLM_OK else {
            recycle(handle, headers)
            return .failure(.internal("curl_multi_add_handle: \(String(cString: ccurl_multi_strerror(added)))"))
        }
        return .success((handle, headers))
    }

    /// The transfer receives the body and the headers through libcurl's callbacks.
    private static func setCallbacks(_ handle: UnsafeMutableRawPointer, for transfer: Transfer) {
        let user = Unmanaged.passUnretained(transfer).toOpaque()
        _ = ccurl_setopt_string(handle, CURLOPT_URL, transfer.url)
        _ = ccurl_setopt_ptr(handle, CURLOPT_WRITEDATA, user)
        _ = ccurl_setopt_ptr(handle, CURLOPT_HEADERDATA, user)
        _ = ccurl_setopt_write_callback(handle) { data, size, count, user in
            let transfer = Unmanaged<Transfer>.fromOpaque(user!).takeUnretainedValue()
            return transfer.receive(UnsafeRawBufferPointer(start: data, count: size * count))
        }
        _ = ccurl_setopt_header_callback(handle) { data, size, count, user in
            let transfer = Unmanaged<Transfer>.fromOpaque(user!).takeUnretainedValue()
            return transfer.header(UnsafeRawBufferPointer(start: data, count: size * count))
        }
    }

    /// How the handle connects: the options every request of this downloader shares.
    private func configureConnection(_ handle: UnsafeMutableRawPointer, for transfer: Transfer) {
        _ = ccurl_setopt_long(handle, CURLOPT_NOSIGNAL, 1)
        // Redirects are followed by the loop (Redirects), which decides per hop whether the
        // --header values may go along: libcurl would send them to any host.
        _ = ccurl_setopt_long(handle, CURLOPT_FOLLOWLOCATION, 0)
        _ = ccurl_setopt_string(handle, CURLOPT_PROTOCOLS_STR, "http,https,file")
        _ = ccurl_setopt_ptr(handle, CURLOPT_ERRORBUFFER, transfer.errorBuffer)
        if let share = options.sessions { _ = ccurl_setopt_ptr(handle, CURLOPT_SHARE, share.handle) }
        // libcurl 7.88 never stores the TLS 1.3 session tickets that arrive on an HTTP/2
        // connection (and one that resumed a session there loses it), so a daemon, which keeps
        // sessions to resume them at its next poll, speaks HTTP/1.1: a poll is one small request,
        // where HTTP/2 gains nothing, and an abbreviated handshake instead of a full one saves
        // most of its bytes (B7). Handles are recycled: the version is set on every use.
        _ = ccurl_setopt_long(handle, CURLOPT_HTTP_VERSION, options.sessions != nil ? CURL_HTTP_VERSION_1_1 : CURL_HTTP_VERSION_2TLS)
        if let caFile = options.caFile { _ = ccurl_setopt_string(handle, CURLOPT_CAINFO, caFile) }
        if let certificate = options.clientCertificate {
            _ = ccurl_setopt_string(handle, CURLOPT_SSLCERT, certificate)
            _ = ccurl_setopt_string(handle, CURLOPT_SSLKEY, options.clientKey ?? certificate)
        }
        if options.maxRate > 0 {
            // About a tenth of a second's worth in the kernel, so that the gate's pauses reach the
            // sender instead of a megabyte-sized buffer absorbing them. (libcurl's own limit,
            // CURLOPT_MAX_RECV_SPEED_LARGE, is per transfer and lets each one's first second through.)
            _ = ccurl_setopt_receive_buffer(handle, Int32(clamping: min(max(options.maxRate / 10, 4096), 256 << 10)))
        } else {
            _ = ccurl_setopt_receive_buffer(handle, 0)
        }
        _ = ccurl_setopt_long(handle, CURLOPT_CONNECTTIMEOUT, options.timeout)
        _ = ccurl_setopt_long(handle, CURLOPT_LOW_SPEED_LIMIT, options.lowSpeedBytes)
        _ = ccurl_setopt_long(handle, CURLOPT_LOW_SPEED_TIME, options.timeout)
        _ = ccurl_setopt_string(handle, CURLOPT_USERAGENT, options.userAgent)
        _ = ccurl_setopt_long(handle, CURLOPT_TCP_KEEPALIVE, 1)
        // Waiting to learn whether a connection multiplexes (HTTP/2) keeps the connections of
        // one origin to one; slices and the connections opened ahead for them want one each
        // (SlicedDownload), and libcurl 7.88 queues them behind one HTTP/1.1 connection otherwise.
        _ = ccurl_setopt_long(handle, CURLOPT_PIPEWAIT, transfer.slice == nil && !transfer.headOnly && options.waitsForMultiplexing ? 1 : 0)
        if Self.environmentHasNoProxy {
            _ = ccurl_setopt_string(handle, CURLOPT_PROXY, "")
            _ = ccurl_setopt_string(handle, CURLOPT_NOPROXY, "")
        }
        // Loopback and LAN reads rarely bring more than 64 KiB at once; 128 KiB per handle only
        // added 2 MiB to a seed's peak RSS (B1: 58 → 54 MiB, no change in time).
        _ = ccurl_setopt_long(handle, CURLOPT_BUFFERSIZE, 64 << 10)
    }

    /// What the handle asks for (a range, validators, encodings) and the request headers that
    /// say it; the list is the caller's to free with the handle (`recycle`).
    private func request(_ handle: UnsafeMutableRawPointer, for transfer: Transfer, resuming resume: (range: Int64, ifRange: String)?) -> UnsafeMutablePointer<curl_slist>? {
        var headers: UnsafeMutablePointer<curl_slist>? = nil
        switch transfer.sink {
        case .memory(let validators):
            if transfer.headOnly { _ = ccurl_setopt_long(handle, CURLOPT_NOBODY, 1) }
            if let member = transfer.member { _ = ccurl_setopt_string(handle, CURLOPT_RANGE, Self.range(member, from: 0)) }
            if options.sessions != nil {
                // A daemon's poll: its connection is kept for the next one or closed at once
                // (KeptConnections), and probes of an idle connection that libcurl would not
                // reuse anyway only cost bytes.
                _ = ccurl_setopt_long(handle, CURLOPT_FORBID_REUSE, transfer.keepConnection ? 0 : 1)
                _ = ccurl_setopt_long(handle, CURLOPT_MAXAGE_CONN, KeptConnections.maxIdle)
                _ = ccurl_setopt_long(handle, CURLOPT_TCP_KEEPIDLE, KeptConnections.maxIdle + 2)
            }
            // Tables compress well; files are fetched as identity so that Range offsets are file offsets.
            if transfer.acceptsEncoding { _ = ccurl_setopt_string(handle, CURLOPT_ACCEPT_ENCODING, "") }
            // A server ignores If-Modified-Since beside If-None-Match (RFC 9110, 13.1.3): the date
            // goes only to an origin that gave no ETag. Every byte counts in a poll (B7).
            for header in transfer.extraHeaders { headers = ccurl_slist_append(headers, header) }
            // Validators may come back from the cache's files: checked again as they leave.
            if let etag = validators?.etag.flatMap(HeaderValue.validator) {
                headers = ccurl_slist_append(headers, "If-None-Match: \(etag)")
            } else if let date = validators?.lastModified.flatMap(HeaderValue.validator) {
                headers = ccurl_slist_append(headers, "If-Modified-Since: \(date)")
            }
        case .file:
            if let member = transfer.member {
                // A member of a tar read in place: its bytes from where the last attempt stopped
                // (a slice of it takes it all, as a file:// URL's whole object).
                _ = ccurl_setopt_string(handle, CURLOPT_RANGE, Self.range(member, from: resume?.range ?? 0))
            } else if let slice = transfer.slice, !transfer.url.hasPrefix("file:") {
                // The slice from where the last attempt stopped (its bytes from `start` are written).
                let from = slice.start + (resume?.range ?? 0)
                _ = ccurl_setopt_string(handle, CURLOPT_RANGE, "\(from)-" + (slice.end.map { String($0 - 1) } ?? ""))
                if let resume { headers = ccurl_slist_append(headers, "If-Range: \(resume.ifRange)") }
            } else if let resume {
                _ = ccurl_setopt_string(handle, CURLOPT_RANGE, "\(resume.range)-")
                headers = ccurl_slist_append(headers, "If-Range: \(resume.ifRange)")
            } else if transfer.fromPeer {
                _ = ccurl_setopt_string(handle, CURLOPT_ACCEPT_ENCODING, "zstd")
            }
        }
        // libcurl's "Accept: */*" says what no header says too (RFC 9110, 12.5.1).
        headers = ccurl_slist_append(headers, "Accept:")
        if let traceparent = options.traceparent { headers = ccurl_slist_append(headers, "traceparent: \(traceparent)") }
        if !options.headers.isEmpty, let host = Remote.authority(of: transfer.url), options.headerHosts.contains(host) {
            for header in options.headers { headers = ccurl_slist_append(headers, header) }
        }
        if let headers { _ = ccurl_setopt_slist(handle, CURLOPT_HTTPHEADER, headers) }
        return headers
    }

    /// The byte range of `member` from its byte `from`, for CURLOPT_RANGE. An empty member still
    /// asks for one byte (libcurl has no empty range), which the transfer drops.
    static func range(_ member: TarMembers.Range, from: Int64) -> String {
        let start = member.offset + min(from, member.size)
        return "\(start)-\(max(start, member.offset + member.size - 1))"
    }

    /// libcurl looks for proxy variables in the environment at every transfer (up to seven
    /// getenv calls). When none is set, an empty proxy and no-proxy list say the same once.
    static let environmentHasNoProxy = (["http_proxy", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY"] as [String])
        .allSatisfy { name in getenv(name) == nil }

    /// A finished transfer's handle, kept for the next one: reset, not freed.
    func recycle(_ handle: UnsafeMutableRawPointer, _ headers: UnsafeMutablePointer<curl_slist>?) {
        if let headers { ccurl_slist_free_all(headers) }
        ccurl_easy_reset(handle)
        idleHandles.append(handle)
    }
}

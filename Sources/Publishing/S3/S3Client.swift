import CCurl
package import RouteSync

/// One request to an S3-compatible store, signed with SigV4 by libcurl (`CURLOPT_AWS_SIGV4`).
package struct S3Request: Sendable {
    package var method: String
    package var url: String
    package var headers: [String] = []
    /// What a PUT sends; its SHA-256 goes into `x-amz-content-sha256`, which the store checks.
    package var body: [UInt8]?
    /// The most of the answer's body kept (a listing, a head); the rest is refused.
    package var limit = 1 << 20
    /// What the caller knows it by (an upload's key).
    package var tag = ""

    package init(method: String, url: String, headers: [String] = [], body: [UInt8]? = nil, limit: Int = 1 << 20, tag: String = "") {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.limit = limit
        self.tag = tag
    }
}

package struct S3Response: Sendable {
    package var status: Int
    package var body: [UInt8]
    /// Response headers by lower-cased name (the last of a name wins).
    package var headers: [String: String] = [:]

    /// `Code: Message` of an S3 error document, or the status alone.
    package var errorText: String {
        let code = XMLText.first("Code", in: body)
        let message = XMLText.first("Message", in: body)
        return [code, message].compactMap { $0 }.joined(separator: ": ").nonEmpty ?? "HTTP \(status)"
    }
}

/// Runs requests through one libcurl multi handle, several at once (hot-updater uploads eight
/// at a time; so do we), retrying what a store under load or losing a server answers
/// transiently (a connection refused, 500, 502, 503, 504, 429) with a growing pause. Without an
/// address the requests are anonymous: what a device or a CDN's edge is asked.
package struct S3Client: Sendable {
    package let address: S3Address?
    package var concurrency = Self.defaultConcurrency
    package static let defaultConcurrency = 8
    package var attempts = 5
    package var timeoutSeconds = 120
    package var caFile: String?

    package init(address: S3Address?) {
        self.address = address
    }

    private static let emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    /// A transfer in flight: what it sends and what it has received so far. Alive until its
    /// easy handle leaves the multi handle (libcurl holds a pointer to it).
    private final class Exchange {
        let index: Int
        let request: S3Request
        var attempt: Int
        var received: [UInt8] = []
        var responseHeaders: [String: String] = [:]
        var refused = false
        var headers: UnsafeMutablePointer<curl_slist>?
        let errors = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)

        init(index: Int, request: S3Request, attempt: Int) {
            self.index = index
            self.request = request
            self.attempt = attempt
            errors[0] = 0
        }

        deinit {
            ccurl_slist_free_all(headers)
            errors.deallocate()
        }
    }

    /// Performs every request; `answer` gets each final response (in completion order) and may
    /// throw to stop the rest. A request that cannot be made at all after its attempts throws.
    package func perform(_ requests: [S3Request], answer: (S3Request, S3Response) throws(CenariusError) -> Void) throws(CenariusError) {
        guard !requests.isEmpty else { return }
        guard ccurl_load() != 0 else { throw .internal(String(cString: ccurl_load_error())) }
        guard let multi = ccurl_multi_init() else { throw .internal("curl_multi_init failed") }
        defer { ccurl_multi_cleanup(multi) }
        var waiting: [(index: Int, attempt: Int, notBefore: Double)] = requests.indices.reversed().map { ($0, 1, 0) }
        var running: [UnsafeMutableRawPointer: Exchange] = [:]
        defer {
            for (handle, _) in running {
                _ = ccurl_multi_remove_handle(multi, handle)
                ccurl_easy_cleanup(handle)
            }
        }
        while !waiting.isEmpty || !running.isEmpty {
            let now = FileSystem.monotonic()
            while running.count < concurrency, let next = waiting.lastIndex(where: { $0.notBefore <= now }) {
                let item = waiting.remove(at: next)
                let exchange = Exchange(index: item.index, request: requests[item.index], attempt: item.attempt)
                let handle = try start(exchange)
                running[handle] = exchange
                _ = ccurl_multi_add_handle(multi, handle)
            }
            var active: Int32 = 0
            _ = ccurl_multi_perform(multi, &active)
            var queued: Int32 = 0
            while let message = ccurl_multi_info_read(multi, &queued) {
                guard message.pointee.msg == CURLMSG_DONE, let handle = message.pointee.easy_handle, let exchange = running.removeValue(forKey: handle) else { continue }
                let result = message.pointee.data.result
                var status = 0
                _ = ccurl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
                _ = ccurl_multi_remove_handle(multi, handle)
                ccurl_easy_cleanup(handle)
                let transient = result != CURLE_OK && !exchange.refused || [429, 500, 502, 503, 504].contains(status)
                if transient, exchange.attempt < attempts {
                    // 0.25 s, 0.5 s, 1 s, 2 s: a store that lost a server settles in that time.
                    let pause = 0.25 * Double(1 << (exchange.attempt - 1))
                    waiting.insert((exchange.index, exchange.attempt + 1, FileSystem.monotonic() + pause), at: 0)
                    continue
                }
                guard result == CURLE_OK else {
                    let detail = exchange.errors[0] != 0 ? String(cString: exchange.errors) : String(cString: ccurl_easy_strerror(result))
                    if exchange.refused { throw .remote("\(exchange.request.method) \(exchange.request.tag): the answer is larger than \(exchange.request.limit) bytes") }
                    throw .remote("\(exchange.request.method) \(exchange.request.url): \(detail)")
                }
                try answer(exchange.request, S3Response(status: status, body: exchange.received, headers: exchange.responseHeaders))
            }
            if !running.isEmpty || !waiting.isEmpty {
                _ = ccurl_multi_poll(multi, running.isEmpty ? 50 : 200)
            }
        }
    }

    /// One request's easy handle, signed for the store.
    private func start(_ exchange: Exchange) throws(CenariusError) -> UnsafeMutableRawPointer {
        guard let handle = ccurl_easy_init() else { throw .internal("curl_easy_init failed") }
        let request = exchange.request
        var headers: UnsafeMutablePointer<curl_slist>?
        if let address {
            let payload = request.body.map { ReleaseIndex.tableDigest($0) } ?? Self.emptySHA256
            headers = ccurl_slist_append(headers, "x-amz-content-sha256: \(payload)")
            if let token = address.credentials.sessionToken { headers = ccurl_slist_append(headers, "x-amz-security-token: \(token)") }
            _ = ccurl_setopt_string(handle, CURLOPT_AWS_SIGV4, "aws:amz:\(address.region):s3")
            // Not CURLOPT_USERPWD: some stores' access keys hold a colon (OpenStack Swift's `account:user`).
            _ = ccurl_setopt_string(handle, CURLOPT_USERNAME, address.credentials.accessKey)
            _ = ccurl_setopt_string(handle, CURLOPT_PASSWORD, address.credentials.secretKey)
        }
        for header in request.headers { headers = ccurl_slist_append(headers, header) }
        exchange.headers = headers
        _ = ccurl_setopt_string(handle, CURLOPT_URL, request.url)
        _ = ccurl_setopt_long(handle, CURLOPT_NOSIGNAL, 1)
        _ = ccurl_setopt_string(handle, CURLOPT_PROTOCOLS_STR, "http,https")
        _ = ccurl_setopt_ptr(handle, CURLOPT_ERRORBUFFER, exchange.errors)
        _ = ccurl_setopt_slist(handle, CURLOPT_HTTPHEADER, headers)
        _ = ccurl_setopt_long(handle, CURLOPT_CONNECTTIMEOUT, 15)
        // libcurl asks a large body's way with `Expect: 100-continue` (a store refusing it answers
        // before the body is sent); an empty `Expect:` header instead would be signed as one (curl 7.88).
        _ = ccurl_setopt_long(handle, CURLOPT_EXPECT_100_TIMEOUT_MS, 300)
        _ = ccurl_setopt_long(handle, CURLOPT_TIMEOUT, timeoutSeconds)
        _ = ccurl_setopt_string(handle, CURLOPT_USERAGENT, "cenariusd-publish")
        if let caFile { _ = ccurl_setopt_string(handle, CURLOPT_CAINFO, caFile) }
        switch request.method {
        case "GET": break
        case "HEAD": _ = ccurl_setopt_long(handle, CURLOPT_NOBODY, 1)
        default: _ = ccurl_setopt_string(handle, CURLOPT_CUSTOMREQUEST, request.method)
        }
        if let body = request.body {
            // Copied by libcurl, so the bytes need not outlive this call; the size first, so a NUL is just a byte.
            _ = ccurl_setopt_off(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.count))
            body.withUnsafeBytes { bytes in
                _ = ccurl_setopt_ptr(handle, CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: bytes.baseAddress ?? UnsafeRawPointer(exchange.errors)))
            }
        }
        _ = ccurl_setopt_ptr(handle, CURLOPT_WRITEDATA, Unmanaged.passUnretained(exchange).toOpaque())
        _ = ccurl_setopt_ptr(handle, CURLOPT_HEADERDATA, Unmanaged.passUnretained(exchange).toOpaque())
        _ = ccurl_setopt_header_callback(handle) { data, size, count, user in
            let exchange = Unmanaged<Exchange>.fromOpaque(user!).takeUnretainedValue()
            let line = String(decoding: UnsafeRawBufferPointer(start: data, count: size * count), as: UTF8.self)
            if let colon = line.firstIndex(of: ":") {
                exchange.responseHeaders[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: " \t\r\n")
            }
            return size * count
        }
        _ = ccurl_setopt_write_callback(handle) { data, size, count, user in
            let exchange = Unmanaged<Exchange>.fromOpaque(user!).takeUnretainedValue()
            guard exchange.received.count + size * count <= exchange.request.limit else {
                exchange.refused = true
                return 0
            }
            exchange.received += UnsafeRawBufferPointer(start: data, count: size * count)
            return size * count
        }
        return handle
    }
}

extension String {
    var nonEmpty: String? { isEmpty ? nil : self }
}

package import RouteSync
import CCurl
#if canImport(Glibc)
import Glibc
#endif

/// One small POST to the running daemon's control API: `cenariusd confirm` and `rollback` ask
/// the daemon that owns the release state instead of writing it themselves. Through libcurl, as
/// every other request, on a multi handle of its own; no proxy (the daemon is local).
package enum ControlRequest {
    package struct Answer: Sendable {
        package var status: Int
        package var body: [UInt8]
    }

    private final class Received {
        var body: [UInt8] = []
    }

    /// A GET of a control endpoint (a sync's receipt).
    package static func get(_ url: String, token: String?, timeoutSeconds: Int = 60) throws(CenariusError) -> Answer {
        try post(url, json: nil, token: token, timeoutSeconds: timeoutSeconds)
    }

    /// `json` nil: a GET.
    package static func post(_ url: String, json: String?, token: String?, timeoutSeconds: Int = 60) throws(CenariusError) -> Answer {
        guard ccurl_load() != 0 else { throw .internal(String(cString: ccurl_load_error())) }
        guard let multi = ccurl_multi_init() else { throw .internal("curl_multi_init failed") }
        defer { ccurl_multi_cleanup(multi) }
        guard let handle = ccurl_easy_init() else { throw .internal("curl_easy_init failed") }
        defer { ccurl_easy_cleanup(handle) }
        let received = Received()
        var headers = ccurl_slist_append(nil, "Content-Type: application/json")
        if let token { headers = ccurl_slist_append(headers, "Authorization: Bearer \(token)") }
        defer { ccurl_slist_free_all(headers) }
        let body = Array((json ?? "").utf8CString)
        return try withExtendedLifetime(received) { () throws(CenariusError) -> Answer in
            try body.withUnsafeBufferPointer { (pointer) throws(CenariusError) -> Answer in
                _ = ccurl_setopt_string(handle, CURLOPT_URL, url)
                _ = ccurl_setopt_string(handle, CURLOPT_NOPROXY, "*")
                _ = ccurl_setopt_long(handle, CURLOPT_NOSIGNAL, 1)
                _ = ccurl_setopt_long(handle, CURLOPT_TIMEOUT, timeoutSeconds)
                if json != nil {
                    _ = ccurl_setopt_long(handle, CURLOPT_POSTFIELDSIZE, body.count - 1)
                    _ = ccurl_setopt_ptr(handle, CURLOPT_POSTFIELDS, UnsafeMutableRawPointer(mutating: pointer.baseAddress))
                }
                _ = ccurl_setopt_slist(handle, CURLOPT_HTTPHEADER, headers)
                _ = ccurl_setopt_ptr(handle, CURLOPT_WRITEDATA, Unmanaged.passUnretained(received).toOpaque())
                _ = ccurl_setopt_write_callback(handle) { data, size, count, user in
                    let received = Unmanaged<Received>.fromOpaque(user!).takeUnretainedValue()
                    guard received.body.count < 1 << 20 else { return 0 }
                    received.body += UnsafeRawBufferPointer(start: data, count: size * count)
                    return size * count
                }
                _ = ccurl_multi_add_handle(multi, handle)
                defer { _ = ccurl_multi_remove_handle(multi, handle) }
                var running: Int32 = 1
                var result = CURLE_OK
                while running > 0 {
                    _ = ccurl_multi_perform(multi, &running)
                    var queued: Int32 = 0
                    while let message = ccurl_multi_info_read(multi, &queued) {
                        if message.pointee.msg == CURLMSG_DONE { result = message.pointee.data.result }
                    }
                    if running > 0 { _ = ccurl_multi_poll(multi, 1000) }
                }
                guard result == CURLE_OK else {
                    throw .storage("cannot reach the running daemon at \(url): \(String(cString: ccurl_easy_strerror(result)))")
                }
                var status = 0
                _ = ccurl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
                return Answer(status: status, body: received.body)
            }
        }
    }
}

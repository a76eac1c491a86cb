import RouteSync
import CCurl

/// A proxy from the usual proxy variables that would not open the tunnel to an https origin:
/// named as the proxy's answer rather than as the origin's failure. Credentials it asks for
/// (407) or a refusal (403) do not come by trying again, so they are permanent; a proxy that
/// cannot reach the origin (502, 503, 504) is left to the ordinary retries.
enum ProxyFailure {
    static func describe(_ code: CURLcode, handle: UnsafeMutableRawPointer, transfer: Transfer) -> CenariusError? {
        var status = 0
        guard code != CURLE_OK, ccurl_getinfo_long(handle, CURLINFO_HTTP_CONNECTCODE, &status) == CURLE_OK,
              status == 403 || status == 407 else { return nil }
        let hint = status == 407 ? " (it wants credentials: give them in the proxy variable's URL, http://user:password@proxy:port)" : ""
        return CenariusError(.remote, "\(transfer.label): the proxy refused a tunnel to \(transfer.host) with HTTP \(status)\(hint)",
                             cause: .httpStatus(status))
    }
}

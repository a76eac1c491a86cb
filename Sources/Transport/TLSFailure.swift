import RouteSync
import CCurl

/// The TLS failures people meet with private origins, named with their cause and host instead
/// of libcurl's generic "SSL peer certificate or SSH remote key was not OK". None of them heals
/// by trying again: they are permanent (another mirror may still be tried).
enum TLSFailure {
    static func describe(_ code: CURLcode, handle: UnsafeMutableRawPointer, transfer: Transfer, options: TransferOptions) -> CenariusError? {
        let host = transfer.host
        let detail = transfer.lastErrorDetail
        let cause: String
        switch code {
        case CURLE_PEER_FAILED_VERIFICATION:
            var result = 0
            _ = ccurl_getinfo_long(handle, CURLINFO_SSL_VERIFYRESULT, &result)
            cause = certificateCause(verifyResult: result, detail: detail, host: host, caFile: options.caFile)
        case CURLE_SSL_CACERT_BADFILE:
            cause = "cannot read the CA bundle \(options.caFile ?? "of the system") (\(detail))"
        case CURLE_SSL_CERTPROBLEM:
            cause = "cannot use the client certificate \(options.clientCertificate ?? "") (\(detail))"
        case CURLE_SSL_CONNECT_ERROR, CURLE_RECV_ERROR, CURLE_SEND_ERROR:
            guard refusesClientCertificate(detail) else { return nil }
            cause = clientCertificateCause(options)
        default:
            return nil
        }
        return .remote("\(transfer.label): TLS: \(cause) (host \(host))")
    }

    /// nginx accepts the handshake and answers 400 when the client certificate is missing or
    /// refused; other servers end the handshake with an alert (`refusesClientCertificate`).
    static func describeHTTP(_ transfer: Transfer, options: TransferOptions) -> CenariusError? {
        guard transfer.status == 400, transfer.url.lowercased().hasPrefix("https://") else { return nil }
        let body = String(decoding: transfer.errorBody, as: UTF8.self)
        guard body.contains("SSL certificate") else { return nil }
        return .remote("\(transfer.label): TLS: \(clientCertificateCause(options)) (host \(transfer.host), HTTP 400)")
    }

    static func certificateCause(verifyResult: Int, detail: String, host: String, caFile: String?) -> String {
        let trust = caFile.map { "not among the CAs in \($0)" } ?? "not trusted by the system; pass --cacert with the CA that signed it"
        switch verifyResult {
        // X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT(_LOCALLY), DEPTH_ZERO_SELF_SIGNED_CERT, SELF_SIGNED_CERT_IN_CHAIN, UNABLE_TO_VERIFY_LEAF_SIGNATURE
        case 2, 18, 19, 20, 21: return "the server's certificate is signed by an unknown certificate authority (\(trust))"
        case 10: return "the server's certificate has expired"
        case 9: return "the server's certificate is not valid yet (check this device's clock)"
        case 23: return "the server's certificate has been revoked"
        case 62: return "the server's certificate does not name \(host)"
        default:
            // libcurl checks the name itself and reports it only in its error text.
            if detail.contains("subject name") || detail.contains("does not match") {
                return "the server's certificate does not name \(host)"
            }
            return "the server's certificate was refused (\(detail.isEmpty ? "verify result \(verifyResult)" : detail))"
        }
    }

    static func refusesClientCertificate(_ detail: String) -> Bool {
        ["alert certificate required", "alert bad certificate", "alert unknown ca", "alert certificate unknown",
         "alert certificate expired", "alert access denied"].contains { detail.contains($0) }
    }

    static func clientCertificateCause(_ options: TransferOptions) -> String {
        guard let certificate = options.clientCertificate else {
            return "the server requires a client certificate (pass --client-cert and --client-key)"
        }
        return "the server refused the client certificate \(certificate)"
    }
}

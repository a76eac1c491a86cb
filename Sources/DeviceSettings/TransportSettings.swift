package import ResourceCache
package import RouteSync
import Transport
package import Settings

extension ResolvedSettings {
    /// `--cacert`, `--client-cert`/`--client-key`, `--header` and `--max-rate`, checked here so that
    /// a typo is a usage error at start rather than a TLS failure at every poll.
    package static func applyTransport(_ source: SettingSource, to sync: inout SyncSettings) throws(CenariusError) {
        var transfer = sync.transfer
        transfer.caFile = try readableFile(source.string("cacert"), setting: "cacert")
        transfer.clientCertificate = try readableFile(source.string("client-cert"), setting: "client-cert")
        transfer.clientKey = try readableFile(source.string("client-key"), setting: "client-key")
        if transfer.clientKey != nil && transfer.clientCertificate == nil {
            throw .usage("--client-key needs --client-cert (the certificate the key belongs to)")
        }
        transfer.headers = try (source.strings("header") ?? []).map { line throws(CenariusError) in try checkedHeader(line) }
        // The headers go to the remotes' hosts and nowhere else, whatever a redirect says.
        transfer.headerHosts = Set(sync.remotes.compactMap { Remote.authority(of: $0.base) })
        if let rate = source.int("max-rate") {
            guard rate >= 0 else { throw .usage("--max-rate must be 0 (no cap) or a number of bytes per second") }
            transfer.maxRate = Int64(rate)
        }
        sync.transfer = transfer
        sync.peers = PeerSources(urls: try (source.strings("peer") ?? []).map { url throws(CenariusError) in try checkedPeer(url) })
    }

    /// An http:// URL with a host, no path and nothing that could split a request: peers are
    /// asked for `/_cenarius/f/<hash>` only.
    static func checkedPeer(_ url: String) throws(CenariusError) -> String {
        let rest = url.lowercased().hasPrefix("http://") ? url.dropFirst(7) : ""
        guard !rest.isEmpty, !rest.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F || $0 == UInt8(ascii: "@") || $0 == UInt8(ascii: "?") }),
              rest.drop(while: { $0 != "/" }).allSatisfy({ $0 == "/" }) else {
            throw .usage("--peer \(JSONText.quoted(url)) must be http://HOST:PORT (a device's --peer-listen)")
        }
        return url
    }

    private static func readableFile(_ path: String?, setting: String) throws(CenariusError) -> String? {
        guard let path else { return nil }
        guard FileSystem.isReadable(path) else { throw .usage("--\(setting) \(JSONText.quoted(path)): no such readable file") }
        return FileSystem.absolute(path)
    }

    /// "Name: value", with a token for a name and nothing that could split the request.
    package static func checkedHeader(_ line: String, setting: String = "header") throws(CenariusError) -> String {
        let parts = line.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        // Registered before anything can print it, a malformed line's message included (G11).
        if parts.count == 2 { Secrets.register(parts[1].drop { $0 == " " || $0 == "\t" }) }
        let tokenCharacters = Set("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
        guard parts.count == 2, !parts[0].isEmpty, parts[0].allSatisfy(tokenCharacters.contains),
              !line.utf8.contains(where: { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F }) else {
            // The value is never repeated: it may be a secret, and redaction cannot know a malformed one (G11).
            throw .usage("--\(setting) \(JSONText.quoted(String(parts[0]))) must look like \"Name: value\" (one line; the value is not shown)")
        }
        return String(parts[0]) + ": " + parts[1].drop { $0 == " " || $0 == "\t" }
    }
}

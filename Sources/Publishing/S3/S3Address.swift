package import RouteSync

/// Where an S3-compatible store's objects are, and how to sign for them: the AWS conventions
/// (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`, `AWS_REGION`, a profile
/// in `~/.aws/credentials`, `AWS_ENDPOINT_URL`), so a publisher's existing set-up just works.
package struct S3Address: Sendable {
    package var bucket: String
    /// The key prefix every object of the remote sits under: `""` or ending in `/`.
    package var prefix: String
    /// `https://s3.<region>.amazonaws.com` unless `--endpoint`/`AWS_ENDPOINT_URL` names another store.
    package var endpoint: String
    package var region: String
    /// `ENDPOINT/BUCKET/KEY` rather than `BUCKET.HOST/KEY`: what MinIO, Ceph and OpenStack Swift
    /// expect by default, and the only form an IP address allows.
    package var pathStyle: Bool
    package var credentials: S3Credentials

    package init(bucket: String, prefix: String, endpoint: String?, region: String?, pathStyle: Bool, environment: (String) -> String?) throws(CenariusError) {
        self.bucket = bucket
        self.prefix = prefix
        credentials = try S3Credentials.find(environment)
        let region = region ?? environment("AWS_REGION") ?? environment("AWS_DEFAULT_REGION") ?? credentials.region ?? "us-east-1"
        self.region = region
        var endpoint = endpoint ?? environment("AWS_ENDPOINT_URL_S3") ?? environment("AWS_ENDPOINT_URL") ?? "https://s3.\(region).amazonaws.com"
        while endpoint.hasSuffix("/") { endpoint.removeLast() }
        guard endpoint.hasPrefix("https://") || endpoint.hasPrefix("http://") else {
            throw .usage("--endpoint \(endpoint): an http:// or https:// URL")
        }
        self.endpoint = endpoint
        // A bucket with dots breaks TLS names in virtual-hosted form; an IP address has no subdomains.
        let host = Remote.authority(of: endpoint) ?? ""
        self.pathStyle = pathStyle || bucket.contains(".") || host.first.map { $0.isNumber || $0 == "[" } == true || host.hasPrefix("localhost")
    }

    /// The URL of an object (its key relative to the remote) or, with `key` nil, of the bucket.
    package func url(_ key: String?, query: [(String, String)] = []) -> String {
        let path = key.map { "/" + Self.encode(prefix + $0, keepSlashes: true) }
        var url: String
        if pathStyle {
            url = endpoint + "/" + bucket + (path ?? "")
        } else {
            let scheme = endpoint.hasPrefix("https://") ? "https://" : "http://"
            url = scheme + bucket + "." + endpoint.dropFirst(scheme.count) + (path ?? "/")
        }
        // SigV4 signs the query exactly as sent: keys sorted, values encoded, `=` always present.
        let sorted = query.sorted { $0.0 < $1.0 }
        if !sorted.isEmpty { url += "?" + sorted.map { Self.encode($0.0, keepSlashes: false) + "=" + Self.encode($0.1, keepSlashes: false) }.joined(separator: "&") }
        return url
    }

    /// S3's URI encoding: every byte but `A-Z a-z 0-9 - _ . ~` (and `/` in a key) as `%XX`.
    package static func encode(_ text: String, keepSlashes: Bool) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            case UInt8(ascii: "/") where keepSlashes:
                out += "/"
            default:
                let digits = Array("0123456789ABCDEF".utf8)
                out += "%" + String(decoding: [digits[Int(byte >> 4)], digits[Int(byte & 15)]], as: UTF8.self)
            }
        }
        return out
    }

    /// S3's bucket naming rules, loosely: what fits in a host name.
    package static func isBucketName(_ name: String) -> Bool {
        (3...63).contains(name.utf8.count) && name.utf8.allSatisfy { ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2E || $0 == 0x2D }
    }
}

/// An access key, its secret and a session token if the key is temporary.
package struct S3Credentials: Sendable {
    package var accessKey: String
    package var secretKey: String
    package var sessionToken: String?
    /// The profile's region in `~/.aws/config`, when the environment names none.
    package var region: String?

    /// The environment first, then the profile (`AWS_PROFILE`, else `default`) of the shared
    /// credentials file, as the AWS CLI and SDKs look.
    static func find(_ environment: (String) -> String?) throws(CenariusError) -> S3Credentials {
        let profile = environment("AWS_PROFILE") ?? "default"
        let home = environment("HOME") ?? "/root"
        let config = (try? FileSystem.readFile(environment("AWS_CONFIG_FILE") ?? home + "/.aws/config", limit: 1 << 20)).map { iniSection($0, profile == "default" ? "default" : "profile " + profile) }
        if let key = environment("AWS_ACCESS_KEY_ID"), let secret = environment("AWS_SECRET_ACCESS_KEY"), !key.isEmpty {
            return S3Credentials(accessKey: key, secretKey: secret, sessionToken: environment("AWS_SESSION_TOKEN"), region: config?["region"])
        }
        let path = environment("AWS_SHARED_CREDENTIALS_FILE") ?? home + "/.aws/credentials"
        if let bytes = try? FileSystem.readFile(path, limit: 1 << 20) {
            let section = iniSection(bytes, profile)
            if let key = section["aws_access_key_id"], let secret = section["aws_secret_access_key"] {
                return S3Credentials(accessKey: key, secretKey: secret, sessionToken: section["aws_session_token"], region: config?["region"])
            }
        }
        throw .usage("no credentials for the object store: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or a profile [\(profile)] in \(path)")
    }

    /// `key = value` lines of one `[section]` of an AWS-style INI file.
    static func iniSection(_ bytes: [UInt8], _ name: String) -> [String: String] {
        var values: [String: String] = [:]
        var inside = false
        for raw in String(decoding: bytes, as: UTF8.self).split(whereSeparator: \.isNewline) {
            let line = raw.trimmingCharacters(in: " \t")
            if line.hasPrefix("#") || line.hasPrefix(";") || line.isEmpty { continue }
            if line.hasPrefix("[") {
                inside = line.dropFirst().dropLast().trimmingCharacters(in: " \t") == name
                continue
            }
            guard inside, let equals = line.firstIndex(of: "=") else { continue }
            values[line[..<equals].trimmingCharacters(in: " \t").lowercased()] = line[line.index(after: equals)...].trimmingCharacters(in: " \t")
        }
        return values
    }
}

extension StringProtocol {
    func trimmingCharacters(in set: String) -> String {
        var text = Substring(self)
        while let first = text.first, set.contains(first) { text = text.dropFirst() }
        while let last = text.last, set.contains(last) { text = text.dropLast() }
        return String(text)
    }
}

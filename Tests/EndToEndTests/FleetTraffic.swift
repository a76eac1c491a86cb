import Foundation
import TestOrigin

/// One simulated fleet's traffic, written in every log format `cenariusd fleet` reads, with the
/// counts it must give known in advance: devices whose histories end in each state (on the new
/// release, rolled back from it, deferred, on trial, held), some of them behind one NAT address,
/// requests that carry no report, 5% of the lines lost (never a device's last, which decides its
/// state), and the lines out of order across three rotated files, the oldest gzip-compressed.
struct FleetTraffic {
    /// nginx's JSON lines, an OpenStack Swift proxy's, Amazon S3 server access logs, CloudFront standard
    /// and real-time logs, Cloudflare Logpush JSON, and Fastly's JSON logging in the format docs/fleet.md gives.
    enum Format: String, CaseIterable { case nginx, swift, s3, cloudfront, realtime, logpush, fastly }

    struct Line {
        var time: Int
        var ip: String
        /// The `Cenarius-Report` value; nil for a request that carries none.
        var report: String?
    }

    private(set) var lines: [Line] = []
    /// Per release: devices, confirmed, trial, deferred, held, failed (as `fleet --json` names them).
    private(set) var releases: [String: [String: Int]] = [:]
    private(set) var why: [String: Int] = [:]
    /// Per release, the bytes its devices' latest reports say they took from LAN peers and from the origin.
    private(set) var bytes: [String: (peer: Int64, origin: Int64)] = [:]
    let devices: Int
    private var random: SplitMix

    static let start = 1_764_000_000

    init(devices: Int = 90, seed: UInt64 = 55) {
        self.devices = devices
        random = SplitMix(seed: seed)
        for n in 0..<devices { addDevice(n) }
        for _ in 0..<(lines.count / 10) {
            lines.append(Line(time: Self.start + Int(random.next() * 4000), ip: "198.51.100.9", report: nil))
        }
        // Rotated files overlap: a line's place is by its time give or take ten minutes.
        lines.sort { $0.time < $1.time }
    }

    private mutating func addDevice(_ n: Int) {
        let device = String(format: "%016x", UInt64(n + 1) &* 0x9E37_79B9_7F4A_7C15)
        // Every seventh device is behind the same NAT address: one address, several devices.
        let ip = n % 7 == 0 ? "203.0.113.7" : "192.0.2.\(n % 250 + 1)"
        func report(_ release: String, _ state: String, failed: [String] = [], why: String?) -> String {
            var text = #"device="\#(device)", release="\#(release)", state=\#(state)"#
            if !failed.isEmpty { text += ", failed=(" + failed.map { "\"\($0)\"" }.joined(separator: " ") + ")" }
            if let why { text += ", why=\(why)" }
            return text
        }
        // Every fifth device took bytes from peers (`peer=N, origin=M` in its latest report); the
        // one after it did once, in an older report, which no longer counts.
        let peer = Int64(n + 1) * 1_000_003, origin = Int64(n + 1) * 37
        let old = report("2026.11-a", "confirmed", why: "current") + (n % 5 == 1 ? ", peer=999999, origin=1" : "")
        let history: [String]
        let final: (release: String, state: String, failed: [String], why: String)
        switch n % 6 {
        case 0, 1: final = ("2026.11-b", "confirmed", [], "current")
        case 2: final = ("2026.11-a", "confirmed", ["2026.11-b"], "held-back")
        case 3: final = ("2026.11-a", "deferred", [], "deferred-moment")
        case 4: final = ("2026.11-b", "trial", [], "trial")
        default: final = ("2026.11-a", "held", ["2026.11-b", "2026.11-0"], "held")
        }
        switch n % 6 {
        case 2, 4: history = [old, report("2026.11-b", "trial", why: "trial")]
        default: history = [old]
        }
        let polls = history + [report(final.release, final.state, failed: final.failed, why: final.why) + (n % 5 == 0 ? ", peer=\(peer), origin=\(origin)" : "")]
        if n % 5 == 0 { bytes[final.release] = ((bytes[final.release]?.peer ?? 0) + peer, (bytes[final.release]?.origin ?? 0) + origin) }
        // Five minutes apart, each device at its own second: no two reports of one device share a time.
        let offset = Int(random.next() * 250)
        let repeats = 2 + Int(random.next() * 3)
        var own: [Line] = []
        for (index, text) in polls.enumerated() {
            let count = index == polls.count - 1 ? 1 : repeats
            for _ in 0..<count { own.append(Line(time: Self.start + offset + own.count * 300, ip: ip, report: text)) }
        }
        // 5% of the lines lost on the way (never the last: it is the device's state, as known).
        lines += own.dropLast().filter { _ in random.next() >= 0.05 } + [own.last!]
        var counts = releases[final.release] ?? [:]
        counts["devices", default: 0] += 1
        counts[final.state, default: 0] += 1
        releases[final.release] = counts
        for name in Set(final.failed) where name != final.release { releases[name, default: [:]]["failed", default: 0] += 1 }
        why[final.why, default: 0] += 1
    }

    /// The counts as `fleet --json`'s `releases`, every field present.
    var expectedReleases: [String: [String: Int]] {
        releases.mapValues { counts in
            Dictionary(uniqueKeysWithValues: ["devices", "confirmed", "trial", "deferred", "held", "failed"].map { ($0, counts[$0] ?? 0) })
        }
    }

    /// Writes the traffic as `format`'s log, rotated into `log.2.gz`, `log.1` and `log`; their paths, oldest first.
    func write(_ format: Format, in folder: String) throws -> [String] {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        var files: [[Line]] = [[], [], []]
        var jitter = SplitMix(seed: 9)
        let span = Double((lines.last?.time ?? 0) - (lines.first?.time ?? 0) + 1)
        for line in lines {
            let place = Double(line.time - (lines.first?.time ?? 0)) + (jitter.next() - 0.5) * 1200
            files[min(2, max(0, Int(place / span * 3)))].append(line)
        }
        var paths: [String] = []
        for (index, file) in files.enumerated() {
            // Out of order inside a file too, as a CDN's several edges write it.
            let shuffled = stride(from: 0, to: file.count, by: 7).flatMap { file[$0..<min($0 + 7, file.count)].reversed() }
            var text = format == .cloudfront ? "#Version: 1.0\n#Fields: " + Self.cloudFrontFields.joined(separator: " ") + "\n" : ""
            for line in shuffled { text += Self.text(line, format) + "\n" }
            let path = folder + "/\(format.rawValue).log" + (index == 2 ? "" : ".\(2 - index)")
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
            if index == 0 {
                let gzip = Process()
                gzip.executableURL = URL(fileURLWithPath: "/bin/gzip")
                gzip.arguments = ["-f", path]
                try gzip.run()
                gzip.waitUntilExit()
                paths.append(path + ".gz")
            } else {
                paths.append(path)
            }
        }
        return paths
    }

    static let cloudFrontFields = ["date", "time", "x-edge-location", "sc-bytes", "c-ip", "cs-method", "cs(Host)", "cs-uri-stem", "sc-status",
                                   "cs(Referer)", "cs(User-Agent)", "cs-uri-query", "cs(Cookie)", "x-edge-result-type"]

    private static func text(_ line: Line, _ format: Format) -> String {
        let date = Date(timeIntervalSince1970: TimeInterval(line.time))
        func formatted(_ pattern: String) -> String {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "UTC")
            formatter.dateFormat = pattern
            return formatter.string(from: date)
        }
        let query = line.report.map { "cenarius-report=" + encoded($0) }
        switch format {
        case .nginx:
            return #"{"time":"\#(line.time).000","report":"\#(escaped(line.report ?? ""))"}"#
        case .swift:
            // proxy-logging: client, remote, date, method, path, protocol, status, referer, agent, token,
            // bytes in and out, etag, transaction, the logged headers, request time, source, info, start, end, policy.
            let headers = line.report.map { "Cenarius-Report:%20" + encoded($0) } ?? "-"
            return "\(line.ip) \(line.ip) \(formatted("dd/MMM/yyyy/HH/mm/ss")) GET /v1/AUTH_test/site/Routes.head HTTP/1.1 200 - cenariusd/1 - - 512 - tx0 \(headers) 0.001 - - \(line.time).000000 \(line.time).001000 0"
        case .s3:
            let target = "/site/Routes.head" + (query.map { "?" + $0 } ?? "")
            return "79a59df900b949e55d96a1e698fbaced cenarius-site [\(formatted("dd/MMM/yyyy:HH:mm:ss")) +0000] \(line.ip) - 3E57427F3EXAMPLE REST.GET.OBJECT site/Routes.head \"GET \(target) HTTP/1.1\" 200 - 512 512 4 3 \"-\" \"cenariusd/1\" - -"
        case .realtime:
            // timestamp, c-ip, sc-status, cs-method, cs-uri-stem, cs-uri-query, cs-headers: the report in the
            // headers on even seconds, in the query string on odd ones (a device with --report-in query).
            let inQuery = line.time % 2 == 1
            let headers = "Host:d111111abcdef8.cloudfront.net" + (!inQuery ? line.report.map { "\nCenarius-Report:" + $0 } ?? "" : "")
            return ["\(line.time).125", line.ip, "200", "GET", "/site/Routes.head", (inQuery ? query : nil) ?? "-", encoded(headers)].joined(separator: "\t")
        case .logpush:
            // The header as a custom field on even seconds, the query string of the URI on odd ones.
            let inQuery = line.time % 2 == 1
            let headers = (inQuery ? nil : line.report).map { #"{"cenarius-report":"\#(escaped($0))"}"# } ?? "{}"
            let uri = "/site/Routes.head" + ((inQuery ? query : nil).map { "?" + $0 } ?? "")
            return #"{"ClientIP":"\#(line.ip)","ClientRequestURI":"\#(uri)","EdgeStartTimestamp":\#(line.time)000000000,"RequestHeaders":\#(headers)}"#
        case .fastly:
            return #"{"time":"\#(line.time)","report":"\#(escaped(line.report ?? ""))","url":"/site/Routes.head","client_ip":"\#(line.ip)"}"#
        case .cloudfront:
            return [formatted("yyyy-MM-dd"), formatted("HH:mm:ss"), "FRA56-C2", "512", line.ip, "GET", "d111111abcdef8.cloudfront.net", "/site/Routes.head", "200",
                    "-", "cenariusd/1", (line.time % 3 == 0 ? query.map(doubled) : query) ?? "-", "-", "Hit"].joined(separator: "\t")
        }
    }

    /// A log that escapes `%` again (`device%253D…`), as some CDNs' logs of a query string may.
    private static func doubled(_ query: String) -> String { query.replacingOccurrences(of: "%", with: "%25") }

    private static func escaped(_ text: String) -> String { text.replacingOccurrences(of: "\"", with: "\\\"") }

    private static func encoded(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~")) ?? text
    }
}

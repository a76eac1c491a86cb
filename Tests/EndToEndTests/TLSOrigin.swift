import Foundation
import TestOrigin

/// A real HTTPS origin for the transport tests: nginx with TLS 1.3 and HTTP/2, certificates from
/// a test CA made here with `openssl`, one server per case:
///
/// - `good`: a certificate for 127.0.0.1; `private/` answers 401 without `Authorization: Bearer s3cret`
/// - `expired`, `wrongName`: certificates that are out of date, or name another host
/// - `mutual`: requires a client certificate from the test CA (`client.pem` / `client.key`)
///
/// Every request is logged as `<uri> <status> <ssl_session_reused> <connection> <protocol> <authorization>`,
/// in `logs/fleet.log` as the JSON line `cenariusd fleet` reads, and in `logs/s3.log` as an S3 server access log.
final class TLSOrigin {
    enum Server: CaseIterable { case good, expired, wrongName, mutual }

    let root: String
    private(set) var ports: [Server: Int] = [:]
    private let process = Process()

    var caFile: String { root + "/ca.pem" }
    var clientCertificate: String { root + "/client.pem" }
    var clientKey: String { root + "/client.key" }
    /// Folders served at `/site/` and `/private/` (which wants the header).
    func folder(_ name: String) -> String { root + "/" + name }
    func url(_ server: Server, _ path: String = "site") -> String { "https://127.0.0.1:\(ports[server]!)/\(path)" }

    /// `keepalive`: seconds nginx keeps an idle connection (its default, 75, unless a test wants it gone).
    private let keepalive: Int

    init(keepalive: Int = 75) throws {
        self.keepalive = keepalive
        root = NSTemporaryDirectory() + "cenarius-tls-" + UUID().uuidString
        for folder in ["site", "private", "logs", "temp"] {
            try FileManager.default.createDirectory(atPath: root + "/" + folder, withIntermediateDirectories: true)
        }
        try makeCertificates()
        for server in Server.allCases { ports[server] = try Self.freePort() }
        try config().write(toFile: root + "/nginx.conf", atomically: true, encoding: .utf8)
        process.executableURL = URL(fileURLWithPath: try Self.nginx())
        process.arguments = ["-p", root, "-c", root + "/nginx.conf", "-e", root + "/logs/error.log"]
        process.standardError = FileHandle.nullDevice
        try process.run()
        try waitUntilListening()
    }

    /// An origin and a scratch folder for one test; the folder is removed when the test ends (its
    /// suite has `.awaitsCleanups`), the origin when the test lets go of it.
    static func withScratch() throws -> (origin: TLSOrigin, dir: Scratch) {
        (try TLSOrigin(), try Scratch.forTest())
    }

    deinit {
        process.signal(SIGTERM)
        process.waitUntilExit()
        try? FileManager.default.removeItem(atPath: root)
    }

    /// The access log's lines for paths ending in `suffix`: (status, session reused, connection, Authorization,
    /// protocol as nginx saw it, `HTTP/2.0` or `HTTP/1.1`).
    func requests(endingWith suffix: String) -> [(status: Int, reused: Bool, connection: Int, authorization: String, protocol: String)] {
        let log = (try? String(contentsOfFile: root + "/logs/access.log", encoding: .utf8)) ?? ""
        return log.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ", maxSplits: 5, omittingEmptySubsequences: false).map(String.init)
            guard fields.count == 6, fields[0].hasSuffix(suffix), let status = Int(fields[1]), let connection = Int(fields[3]) else { return nil }
            return (status, fields[2] == "r", connection, fields[5], fields[4])
        }
    }

    /// Whether any TCP connection to `server`'s port is still established (as `ss` sees the kernel's sockets).
    func hasEstablishedConnections(_ server: Server) throws -> Bool {
        let ss = Process()
        ss.executableURL = URL(fileURLWithPath: "/usr/bin/ss")
        ss.arguments = ["-Htn", "state", "established", "( sport = :\(ports[server]!) )"]
        let out = Pipe()
        ss.standardOutput = out
        try ss.run()
        let listed = out.fileHandleForReading.readDataToEndOfFile()
        ss.waitUntilExit()
        guard ss.terminationStatus == 0 else { throw Failure("ss failed (\(ss.terminationStatus))") }
        return !listed.isEmpty
    }

    private func makeCertificates() throws {
        let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
        try openssl(["req", "-x509"] + ec + ["-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=cenariusd test CA"])
        func issue(_ name: String, extensions: String, days: String = "2") throws {
            try openssl(["req"] + ec + ["-keyout", "\(name).key", "-out", "\(name).csr", "-subj", "/CN=\(name)"])
            try extensions.write(toFile: root + "/\(name).ext", atomically: true, encoding: .utf8)
            // A negative number of days gives a certificate that has already expired.
            try openssl(["x509", "-req", "-in", "\(name).csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
                         "-out", "\(name).pem", "-days", days, "-extfile", "\(name).ext"])
        }
        try issue("good", extensions: "subjectAltName=IP:127.0.0.1,DNS:localhost\n")
        try issue("expired", extensions: "subjectAltName=IP:127.0.0.1\n", days: "-1")
        try issue("wrongname", extensions: "subjectAltName=DNS:other.example\n")
        try issue("client", extensions: "extendedKeyUsage=clientAuth\n")
    }

    private func config() -> String {
        func server(_ server: Server, certificate: String, extra: String = "") -> String {
            """
              server {
                listen 127.0.0.1:\(ports[server]!) ssl http2;
                ssl_certificate \(root)/\(certificate).pem;
                ssl_certificate_key \(root)/\(certificate).key;
                ssl_protocols TLSv1.3;
                root \(root);
                etag on;
                \(extra)
                location /private/ {
                  if ($http_authorization != "Bearer s3cret") { return 401; }
                }
              }

            """
        }
        let user = getuid() == 0 ? "user root;" : ""
        return """
            \(user)
            worker_processes 1;
            daemon off;
            pid \(root)/nginx.pid;
            events { worker_connections 256; }
            http {
              log_format transport '$uri $status $ssl_session_reused $connection $server_protocol $http_authorization';
              # The HEAD requests a first install opens connections with (SlicedDownload) are not polls.
              map $request_method $logged { HEAD 0; default 1; }
              access_log \(root)/logs/access.log transport if=$logged;
              # What docs/fleet.md asks publishers to log: `cenariusd fleet` reads it.
              log_format cenarius escape=json '{"time":"$msec","report":"$http_cenarius_report"}';
              access_log \(root)/logs/fleet.log cenarius;
              # An Amazon S3 server access log's shape (bucket owner, bucket, [time], ..., "request line"),
              # which keeps no request headers: a report reaches it only in the query string.
              log_format s3 'cenarius origin [$time_local] $remote_addr - - REST.GET.OBJECT $uri "$request" $status - $bytes_sent - - - "-" "-" -';
              access_log \(root)/logs/s3.log s3;
              client_body_temp_path \(root)/temp/body;
              proxy_temp_path \(root)/temp/proxy;
              fastcgi_temp_path \(root)/temp/fastcgi;
              uwsgi_temp_path \(root)/temp/uwsgi;
              scgi_temp_path \(root)/temp/scgi;
              keepalive_timeout \(keepalive)s;
            \(server(.good, certificate: "good"))
            \(server(.expired, certificate: "expired"))
            \(server(.wrongName, certificate: "wrongname"))
            \(server(.mutual, certificate: "good", extra: "ssl_verify_client on; ssl_client_certificate \(root)/ca.pem;"))
            }
            """
    }

    private func openssl(_ arguments: [String]) throws {
        let run = Process()
        run.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        run.arguments = arguments
        run.currentDirectoryURL = URL(fileURLWithPath: root)
        run.standardOutput = FileHandle.nullDevice
        run.standardError = FileHandle.nullDevice
        try run.run()
        run.waitUntilExit()
        guard run.terminationStatus == 0 else { throw Failure("openssl \(arguments.joined(separator: " ")) failed") }
    }

    private func waitUntilListening() throws {
        for _ in 0..<200 {
            if ports.values.allSatisfy({ port in LoopbackSocket.connect(port: port).map { close($0); return true } ?? false }) { return }
            guard process.isRunning else { break }
            usleep(25_000)
        }
        let log = (try? String(contentsOfFile: root + "/logs/error.log", encoding: .utf8)) ?? ""
        throw Failure("nginx did not start: \(log)")
    }

    private static func nginx() throws -> String {
        for path in ["/usr/sbin/nginx", "/usr/bin/nginx", "/usr/local/sbin/nginx"] where FileManager.default.isExecutableFile(atPath: path) {
            return path
        }
        throw Failure("nginx is not installed: the HTTPS tests need it (make test installs it)")
    }

    /// A port the kernel just handed out and took back: free unless another process grabs it at once.
    static func freePort() throws -> Int {
        guard let (fd, port) = LoopbackSocket.bind() else { throw Failure("no free port") }
        close(fd)
        return port
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}

import Foundation
#if canImport(Glibc)
import Glibc
#endif
import TestOrigin

/// A deliberately dumb HTTP/1.1 client over a socket: it sends the request line exactly as
/// given (no path normalisation), so tests can try `..`, `%2e%2e` and backslashes.
struct RawHTTP {
    struct Response {
        var status: Int
        var headers: [String: String]
        var body: [UInt8]
        var text: String { String(decoding: body, as: UTF8.self) }

        func json() throws -> [String: Any] {
            try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] ?? [:]
        }
    }

    let port: Int

    func request(_ method: String, _ target: String, headers: [String: String] = [:], body: String = "") throws -> Response {
        var text = "\(method) \(target) HTTP/1.1\r\n\(headers.keys.contains("Host") ? "" : "Host: 127.0.0.1:\(port)\r\n")Connection: close\r\n"
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        text += "Content-Length: \(body.utf8.count)\r\n\r\n\(body)"
        let received = try exchange(Array(text.utf8))
        // Nothing back within the socket's timeout (a daemon locked out at its limit): an error, not a crash.
        guard let response = try RawHTTP.parse(received, methods: [method]).first else { throw POSIXError(.ETIMEDOUT) }
        return response
    }

    /// Sends the bytes on one connection and reads until the server closes it.
    func exchange(_ bytes: [UInt8]) throws -> [UInt8] {
        guard let fd = LoopbackSocket.connect(port: port, timeout: 10) else { throw POSIXError(.ECONNREFUSED) }
        defer { close(fd) }
        _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { break }
            received.append(contentsOf: chunk[0..<n])
        }
        return received
    }

    /// Responses one after another on a connection; `method` tells HEAD replies (no body).
    static func parse(_ received: [UInt8], methods: [String] = []) throws -> [Response] {
        var responses: [Response] = []
        var rest = received[...]
        var methods = methods[...]
        while !rest.isEmpty {
            guard let split = rest.firstRange(of: Array("\r\n\r\n".utf8)) else { throw POSIXError(.EPROTO) }
            let head = String(decoding: rest[..<split.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
            let status = Int(head[0].split(separator: " ")[1]) ?? 0
            var fields: [String: String] = [:]
            for line in head.dropFirst() {
                guard let colon = line.firstIndex(of: ":") else { continue }
                fields[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
            let isHead = (methods.popFirst() ?? "GET") == "HEAD"
            let length = isHead || status == 304 ? 0 : fields["content-length"].flatMap { Int($0) } ?? (rest.endIndex - split.upperBound)
            let end = min(split.upperBound + length, rest.endIndex)
            responses.append(Response(status: status, headers: fields, body: Array(rest[split.upperBound..<end])))
            rest = rest[end...]
        }
        return responses
    }
    func get(_ target: String, headers: [String: String] = [:]) throws -> Response { try request("GET", target, headers: headers) }
}

/// `cenariusd serve` started as a child process, stopped with SIGTERM.
final class DaemonProcess {
    let process = Process()
    let cache: String
    /// The daemon's working directory: the cache's parent folder (commands it runs write there).
    let workingDirectory: String
    let stderrPipe = Pipe()
    private(set) var port = 0

    /// `wrapper`: a command that execs the daemon (`prlimit --nofile=…`), keeping its pid.
    /// `journal`: stderr is announced as the journal's stream (`JOURNAL_STREAM`), as systemd does.
    init(_ arguments: [String], cache: String, environment: [String: String] = [:], wrapper: [String] = [], journal: Bool = false) throws {
        self.cache = cache
        workingDirectory = URL(fileURLWithPath: cache).deletingLastPathComponent().path
        // A daemon killed with SIGKILL leaves its daemon.json behind; wait for the new one.
        try? FileManager.default.removeItem(atPath: cache + "/daemon.json")
        process.executableURL = URL(fileURLWithPath: wrapper.first ?? Binary.path)
        // Tests want the first sync now; the start jitter has tests of its own.
        let jitter = arguments.contains("--start-jitter") ? [] : ["--start-jitter", "0"]
        let command = wrapper.isEmpty ? [] : Array(wrapper.dropFirst()) + [Binary.path]
        process.arguments = command + ["serve", "--port", "0", "--cache", cache] + jitter + arguments
        var env = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("CENARIUS_") }
        env["XDG_CONFIG_HOME"] = "/nonexistent-config-home"
        for (key, value) in environment { env[key] = value }
        if journal {
            var info = stat()
            fstat(stderrPipe.fileHandleForWriting.fileDescriptor, &info)
            env["JOURNAL_STREAM"] = "\(info.st_dev):\(info.st_ino)"
        }
        process.environment = env
        process.currentDirectoryURL = URL(fileURLWithPath: workingDirectory)
        process.standardError = stderrPipe
        process.standardOutput = FileHandle.nullDevice
        try process.run()
    }

    /// Waits for `daemon.json` (written once the server listens) and a first answer on /health.
    func waitUntilServing(healthy: Bool = true) throws -> RawHTTP {
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            if port == 0, let data = FileManager.default.contents(atPath: cache + "/daemon.json"),
               let info = try? JSONSerialization.jsonObject(with: data) as? [String: Any], let url = info["url"] as? String,
               let p = Int(url.split(separator: ":").last ?? "") {
                port = p
            }
            if port != 0, let response = try? RawHTTP(port: port).get("/health"), !healthy || response.status == 200 {
                return RawHTTP(port: port)
            }
            guard process.isRunning else { break }
            usleep(50_000)
        }
        throw POSIXError(.ETIMEDOUT)
    }

    /// SIGTERM, then the exit status and the seconds it took.
    func terminate() -> (status: Int32, seconds: Double) {
        let started = Date()
        process.signal(SIGTERM)
        process.waitUntilExit()
        return (process.terminationStatus, Date().timeIntervalSince(started))
    }

    var stderr: String { String(decoding: stderrPipe.fileHandleForReading.availableData, as: UTF8.self) }

    /// A test that fails half-way must not leave a daemon behind.
    deinit {
        if process.isRunning {
            process.signal(SIGKILL)
            process.waitUntilExit()
        }
    }
}

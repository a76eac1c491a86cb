import Foundation
#if canImport(Glibc)
import Glibc
#endif
import TestOrigin

/// Debian's headless Chromium driven over its DevTools protocol: the real browser a kiosk's web
/// view is, for the features a page uses (EventSource, Server-Timing, fetch with Origin).
/// `make test` installs the `chromium` package; a missing browser fails the test loudly.
final class Browser {
    let process = Process()
    let profile: String
    private let socket: WebSocket
    private var nextID = 0
    /// DevTools events received while waiting for answers (Network.* when enabled).
    private(set) var events: [[String: Any]] = []

    static var executable: String? {
        ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"].first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    init() throws {
        guard let executable = Browser.executable else {
            throw WebSocket.Failure(description: "no chromium on this machine: `apt-get install chromium` (make test does it)")
        }
        profile = NSTemporaryDirectory() + "cenarius-chromium-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: profile, withIntermediateDirectories: true)
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                             "--no-default-browser-check", "--disable-extensions", "--disable-background-networking",
                             "--window-size=900,700", "--remote-debugging-port=0", "--user-data-dir=\(profile)", "about:blank"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Chromium writes the port it picked, then the browser target's path.
        let portFile = profile + "/DevToolsActivePort"
        var port = 0
        let deadline = Date().addingTimeInterval(30)
        while port == 0 && Date() < deadline {
            if let text = try? String(contentsOfFile: portFile, encoding: .utf8), let first = text.split(separator: "\n").first, let p = Int(first) {
                port = p
            } else {
                usleep(100_000)
            }
        }
        guard port != 0 else {
            Browser.kill(process)
            throw WebSocket.Failure(description: "chromium did not open its DevTools port")
        }
        var pageURL: String?
        while pageURL == nil && Date() < deadline {
            let list = try? JSONSerialization.jsonObject(with: Data(RawHTTP(port: port).get("/json/list").body)) as? [[String: Any]]
            pageURL = list?.first { $0["type"] as? String == "page" }?["webSocketDebuggerUrl"] as? String
            if pageURL == nil { usleep(100_000) }
        }
        guard let pageURL else {
            Browser.kill(process)
            throw WebSocket.Failure(description: "chromium has no page target")
        }
        socket = try WebSocket(pageURL)
        _ = try call("Page.enable")
        _ = try call("Runtime.enable")
    }

    deinit {
        Browser.kill(process)
        try? FileManager.default.removeItem(atPath: profile)
    }

    private static func kill(_ process: Process) {
        guard process.isRunning else { return }
        process.signal(SIGKILL)
        process.waitUntilExit()
    }

    /// One DevTools command; its `result`.
    @discardableResult
    func call(_ method: String, _ params: [String: Any] = [:]) throws -> [String: Any] {
        nextID += 1
        let id = nextID
        let message = try JSONSerialization.data(withJSONObject: ["id": id, "method": method, "params": params])
        try socket.send(String(decoding: message, as: UTF8.self))
        while true {
            let reply = try JSONSerialization.jsonObject(with: Data(try socket.receive().utf8)) as? [String: Any] ?? [:]
            if reply["id"] as? Int == id {
                if let error = reply["error"] as? [String: Any] { throw WebSocket.Failure(description: "\(method): \(error)") }
                return reply["result"] as? [String: Any] ?? [:]
            }
            if reply["method"] != nil { events.append(reply) }
        }
    }

    /// DevTools events of one kind seen so far (after `call("Network.enable")` for Network.*).
    func events(_ method: String) -> [[String: Any]] {
        events.filter { $0["method"] as? String == method }.compactMap { $0["params"] as? [String: Any] }
    }

    /// Loads `url` and waits until the document has loaded.
    func navigate(_ url: String) throws {
        try call("Page.navigate", ["url": url])
        try waitFor("document.readyState === 'complete' && location.href === \(Browser.quoted(url))")
    }

    /// The value of a JavaScript expression (promises awaited).
    func evaluate(_ expression: String) throws -> Any? {
        let result = try call("Runtime.evaluate", ["expression": expression, "awaitPromise": true, "returnByValue": true])
        if let exception = result["exceptionDetails"] { throw WebSocket.Failure(description: "\(expression): \(exception)") }
        return (result["result"] as? [String: Any])?["value"]
    }

    /// Polls a JavaScript condition until it is true.
    func waitFor(_ condition: String, timeout: Double = 30) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if (try? evaluate("Boolean(\(condition))")) as? Bool == true { return }
            usleep(100_000)
        }
        throw WebSocket.Failure(description: "not true within \(timeout) s: \(condition)")
    }

    /// A PNG of the page, kept as a test artefact under `.build/test-artifacts/`.
    @discardableResult
    func screenshot(_ name: String) throws -> String {
        let result = try call("Page.captureScreenshot", ["format": "png"])
        guard let base64 = result["data"] as? String, let png = Data(base64Encoded: base64) else {
            throw WebSocket.Failure(description: "no screenshot data")
        }
        let folder = Browser.artifacts
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let path = folder + "/" + name + ".png"
        try png.write(to: URL(fileURLWithPath: path))
        return path
    }

    static var artifacts: String {
        URL(fileURLWithPath: Binary.path).deletingLastPathComponent().deletingLastPathComponent().path + "/test-artifacts"
    }

    static func quoted(_ text: String) -> String {
        String(decoding: try! JSONSerialization.data(withJSONObject: [text]), as: UTF8.self).dropFirst().dropLast().description
    }
}

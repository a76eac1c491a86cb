import Foundation

/// Waiting for a state the tests cannot be told of: poll it every 50 ms for up to `timeout`
/// seconds (30 by default: a daemon started on a loaded CI machine). Every wait fails one way,
/// by throwing `WaitTimeout`, which fails the test where it waited.
struct WaitTimeout: Error, CustomStringConvertible {
    var what: String
    var seconds: Double
    var description: String { "\(what) not within \(seconds) s" }
}

/// The first non-nil answer of `attempt`.
func poll<T>(_ what: String, timeout: Double = 30, _ attempt: () throws -> T?) throws -> T {
    let deadline = Date().addingTimeInterval(timeout)
    while true {
        if let answer = try attempt() { return answer }
        guard Date() < deadline else { throw WaitTimeout(what: what, seconds: timeout) }
        usleep(50_000)
    }
}

func waitUntil(timeout: Double = 30, _ condition: () throws -> Bool) throws {
    try poll("condition met", timeout: timeout) { try condition() ? () : nil }
}

/// A sync receipt once it says SUCCEED or FAILED.
func waitForReceipt(_ http: RawHTTP, _ id: String) throws -> [String: Any] {
    try poll("receipt \(id) settled") {
        let receipt = try http.get("/_cenarius/sync/\(id)").json()
        let status = receipt["status"] as? String
        return status == "SUCCEED" || status == "FAILED" ? receipt : nil
    }
}

/// A text file once it has `lines` lines.
func waitForFile(_ path: String, lines: Int, timeout: Double = 30) throws -> String {
    try poll("\(lines) lines in \(path)", timeout: timeout) {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8), text.split(separator: "\n").count >= lines else { return nil }
        return text
    }
}

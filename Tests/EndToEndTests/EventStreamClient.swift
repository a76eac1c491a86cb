import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Reads `GET /_cenarius/events` as a browser's EventSource would: one connection, chunked
/// Server-Sent Events parsed as they arrive.
final class EventStreamClient {
    struct Event {
        var id: String
        var name: String
        var data: [String: Any]

        func int(_ key: String) -> Int? { data[key] as? Int }
        func string(_ key: String) -> String? { data[key] as? String }
        func bool(_ key: String) -> Bool? { data[key] as? Bool }
        func double(_ key: String) -> Double? { data[key] as? Double }
        /// `null` in the JSON.
        func isNull(_ key: String) -> Bool { data[key] is NSNull }
    }

    let fd: Int32
    private(set) var status = 0
    private(set) var headers: [String: String] = [:]
    private var buffer: [UInt8] = []
    private var body: [UInt8] = []
    private var headDone = false
    /// Comment lines seen (`: keep-alive`).
    private(set) var comments = 0
    /// Events that arrived with the response head, before anyone asked for them.
    private var early: [Event] = []

    /// Returns once the response head is in: the daemon registers a stream before it writes the
    /// head, so an event published after this returns is never missed (one published before it
    /// is only seen with `lastEventID`).
    init(port: Int, lastEventID: String? = nil, timeout: Double = 30) throws {
        guard let fd = LoopbackSocket.connect(port: port) else { throw POSIXError(.ECONNREFUSED) }
        self.fd = fd
        var request = "GET /_cenarius/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n"
        if let lastEventID { request += "Last-Event-ID: \(lastEventID)\r\n" }
        request += "\r\n"
        _ = Array(request.utf8).withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        let deadline = Date().addingTimeInterval(timeout)
        while !headDone {
            let left = deadline.timeIntervalSinceNow
            guard left > 0, receive(waiting: left) else { throw POSIXError(.ETIMEDOUT) }
            early += parseEvents()
        }
    }

    deinit { close(fd) }

    /// Events until `count` have arrived or `timeout` seconds passed.
    func next(_ count: Int = 1, timeout: Double = 30) throws -> [Event] {
        var events = early
        early = []
        let deadline = Date().addingTimeInterval(timeout)
        while events.count < count {
            events += parseEvents()
            if events.count >= count { break }
            let left = deadline.timeIntervalSinceNow
            guard left > 0, receive(waiting: left) else { break }
        }
        return events
    }

    /// Reads what arrives within `seconds` into the buffer; false on timeout or a closed stream.
    private func receive(waiting seconds: Double) -> Bool {
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, Int32(seconds * 1000)) > 0 else { return false }
        var chunk = [UInt8](repeating: 0, count: 16384)
        let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n <= 0 { return false }
        buffer += chunk[0..<n]
        return true
    }

    /// Waits for the first event named `name` (and of `generation`, if given), skipping the ones
    /// before it; those that came after it in the same read stay for the next call.
    func wait(for name: String, generation: Int? = nil, timeout: Double = 30) throws -> Event? {
        let deadline = Date().addingTimeInterval(timeout)
        while deadline.timeIntervalSinceNow > 0 {
            let events = try next(1, timeout: deadline.timeIntervalSinceNow)
            if let found = events.firstIndex(where: { $0.name == name && (generation == nil || $0.int("generation") == generation) }) {
                early = Array(events[(found + 1)...]) + early
                return events[found]
            }
        }
        return nil
    }

    private func parseEvents() -> [Event] {
        if !headDone {
            guard let split = buffer.firstRange(of: Array("\r\n\r\n".utf8)) else { return [] }
            let head = String(decoding: buffer[..<split.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
            status = Int(head[0].split(separator: " ")[1]) ?? 0
            for line in head.dropFirst() {
                guard let colon = line.firstIndex(of: ":") else { continue }
                headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
            buffer.removeSubrange(..<split.upperBound)
            headDone = true
        }
        // De-chunk what is complete.
        while let lineEnd = buffer.firstRange(of: Array("\r\n".utf8)),
              let size = Int(String(decoding: buffer[..<lineEnd.lowerBound], as: UTF8.self), radix: 16),
              buffer.count >= lineEnd.upperBound + size + 2 {
            body += buffer[lineEnd.upperBound..<(lineEnd.upperBound + size)]
            buffer.removeSubrange(..<(lineEnd.upperBound + size + 2))
        }
        var events: [Event] = []
        while let end = body.firstRange(of: Array("\n\n".utf8)) {
            let block = String(decoding: body[..<end.lowerBound], as: UTF8.self)
            body.removeSubrange(..<end.upperBound)
            var id = "", name = "message", data = ""
            for line in block.split(separator: "\n") {
                if line.hasPrefix(":") { comments += 1 }
                else if line.hasPrefix("id: ") { id = String(line.dropFirst(4)) }
                else if line.hasPrefix("event: ") { name = String(line.dropFirst(7)) }
                else if line.hasPrefix("data: ") { data = String(line.dropFirst(6)) }
            }
            guard !data.isEmpty else { continue }
            let json = (try? JSONSerialization.jsonObject(with: Data(data.utf8))) as? [String: Any] ?? [:]
            events.append(Event(id: id, name: name, data: json))
        }
        return events
    }
}

import Foundation
import Crypto
import NIOCore
import NIOPosix
import Synchronization

/// An in-process HTTP/1.1 origin on 127.0.0.1 that serves a folder held in memory, with
/// ETag/304 and Range/If-Range, counts every request, and injects faults on demand.
/// Written on raw NIO so that it can misbehave in ways a well-behaved server framework won't
/// (truncated bodies, dropped connections, stalls).
public final class TestOrigin: Sendable {
    public struct Request: Sendable {
        public let method: String
        public let path: String
        public let headers: [String: String]
        /// The request's body (Content-Length framed), for POSTs to a sink.
        public var body: [UInt8] = []
    }

    struct State {
        var files: [String: [UInt8]] = [:]
        var faults: [String: (fault: Fault, remaining: Int)] = [:]
        var requests: [Request] = []
        var sendValidators = true
        var sinks: Set<String> = []
    }

    let state = Mutex(State())
    let group: MultiThreadedEventLoopGroup
    let channel: any Channel
    public let port: Int

    public var url: String { "http://127.0.0.1:\(port)" }

    public init() async throws {
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let box = OriginBox()
        channel = try await ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(OriginHandler(origin: box))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        port = channel.localAddress!.port!
        box.origin = self
    }

    private let stopped = Mutex(false)

    /// Idempotent: tests stop the origin to simulate an outage, then clean up again.
    public func shutdown() async {
        let first = stopped.withLock { stopped in
            defer { stopped = true }
            return !stopped
        }
        guard first else { return }
        try? await channel.close()
        try? await group.shutdownGracefully()
    }

    // MARK: - Content

    public func put(_ path: String, _ bytes: [UInt8]) { state.withLock { $0.files[path] = bytes } }
    public func put(_ path: String, _ text: String) { put(path, Array(text.utf8)) }
    public func remove(_ path: String) { _ = state.withLock { $0.files.removeValue(forKey: path) } }
    public func file(_ path: String) -> [UInt8]? { state.withLock { $0.files[path] } }

    /// Whether ETag/Last-Modified are sent (a server without validators).
    public func setValidators(_ on: Bool) { state.withLock { $0.sendValidators = on } }

    /// Publishes `files` plus a `Routes.json` listing them with MD5 hashes; returns the table bytes.
    @discardableResult
    public func publish(_ files: [String: String], routesName: String = "Routes.json", extraEntries: String = "") -> [UInt8] {
        publish(files.mapValues { Array($0.utf8) }, routesName: routesName, extraEntries: extraEntries)
    }

    @discardableResult
    public func publish(_ files: [String: [UInt8]], routesName: String = "Routes.json", extraEntries: String = "", sizes: Bool = false) -> [UInt8] {
        var lines: [String] = []
        for (uri, content) in files.sorted(by: { $0.key < $1.key }) {
            put(uri, content)
            let size = sizes ? ", \"size\": \(content.count)" : ""
            lines.append("{\"uri\": \"\(uri)\", \"hash\": \"\(TestOrigin.md5(content))\"\(size)}")
        }
        if !extraEntries.isEmpty { lines.append(extraEntries) }
        let table = Array(("[\n" + lines.joined(separator: ",\n") + "\n]\n").utf8)
        put(routesName, table)
        return table
    }

    public static func md5(_ bytes: [UInt8]) -> String {
        Insecure.MD5.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
    }

    public static func sha256(_ bytes: [UInt8]) -> String {
        SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
    }

    /// POSTs to `path` are answered 204 (a report sink); their bodies are in `requests(for:)`.
    /// Faults injected on the path apply first (503, drop, delay: a sink's outage).
    public func acceptPosts(on path: String) { _ = state.withLock { $0.sinks.insert(path) } }

    func isSink(_ path: String) -> Bool { state.withLock { $0.sinks.contains(path) } }

    // MARK: - Faults and accounting

    /// Injects `fault` for the next `times` requests of `path` (Int.max: until cleared).
    public func inject(_ fault: Fault, on path: String, times: Int = .max) {
        state.withLock { $0.faults[path] = (fault, times) }
    }

    public func clearFaults() { state.withLock { $0.faults.removeAll() } }

    public var requests: [Request] { state.withLock { $0.requests } }
    public func requests(for path: String) -> [Request] { requests.filter { $0.path == path } }
    /// The requests but HEADs. A first install opens its pack's connections by HEAD requests
    /// beside its first poll and cancels them once it knows it wants no pack: a loaded origin
    /// may read some after the test has reset its requests, ahead of the next sync's.
    public var gets: [Request] { requests.filter { $0.method != "HEAD" } }
    public func resetRequests() { state.withLock { $0.requests.removeAll() } }

    func takeFault(_ path: String) -> Fault? {
        state.withLock { state in
            guard let entry = state.faults[path], entry.remaining > 0 else { return nil }
            state.faults[path] = entry.remaining == Int.max ? entry : (entry.fault, entry.remaining - 1)
            return entry.fault
        }
    }

    func record(_ request: Request) -> (bytes: [UInt8]?, validators: Bool) {
        state.withLock { state in
            state.requests.append(request)
            return (state.files[request.path], state.sendValidators)
        }
    }
}

/// Lets the handler reach the origin, which is created after the bootstrap.
final class OriginBox: @unchecked Sendable {
    // Written once before the first connection is accepted, read only afterwards.
    nonisolated(unsafe) weak var origin: TestOrigin?
}

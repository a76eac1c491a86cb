@testable import Daemon
import Foundation
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing

/// The connection's state machine as a value, and the handler driven by it on a test channel.
@Suite struct HTTPConnectionStateTests {
    typealias Machine = HTTPConnection.StateMachine

    func request(_ uri: String = "/") -> PendingRequest {
        PendingRequest(head: HTTPRequestHead(version: .http1_1, method: .GET, uri: uri))
    }

    @Test func requestsBehindAComputedReplyWaitInOrderAndReadingPausesWhenTooManyDo() {
        var machine = Machine()
        guard case .handle = machine.received(request("/0")) else { Issue.record("first request not handled"); return }
        machine.replyStarted()
        for i in 1..<HTTPConnection.maxWaiting {
            guard case .wait = machine.received(request("/\(i)")) else { Issue.record("request \(i) not queued"); return }
        }
        guard case .waitAndPauseReading = machine.received(request("/last")) else { Issue.record("reading not paused"); return }
        do { let value = machine.nextWaiting(); #expect(value == nil) }  // the reply in progress comes first
        do { let value = machine.replyComputed(); #expect(value) }
        do { let value = machine.nextWaiting(); #expect(value?.head.uri == "/1") }
        do { let value = machine.resumeReading(); #expect(!value) }  // still too many waiting
        for _ in 0..<HTTPConnection.maxWaiting / 2 { _ = machine.nextWaiting() }
        do { let value = machine.resumeReading(); #expect(value) }
        do { let value = machine.resumeReading(); #expect(!value) }
    }

    @Test func aShutdownAnswersWhatIsOwedThenCloses() {
        var machine = Machine()
        _ = machine.received(request())
        machine.replyStarted()
        _ = machine.received(request("/behind"))
        guard case .none = machine.quiesce() else { Issue.record("closed with a reply owed"); return }
        #expect(!machine.takesRequests)
        #expect(machine.keepsAlive(true))  // one more request waits: this reply is not the last
        do { let value = machine.replyComputed(); #expect(value) }
        do { let value = machine.nextWaiting(); #expect(value?.head.uri == "/behind") }
        #expect(!machine.keepsAlive(true))  // the last reply says Connection: close
        do { let value = machine.closeIfIdle(); #expect(value) }
        do { let value = machine.closeIfIdle(); #expect(!value) }
    }

    @Test func malformedInputIsRefusedOnlyWhenNothingIsOwed() {
        var idle = Machine()
        guard case .refuse = idle.malformed(connectionClosed: false) else { Issue.record("not refused"); return }
        var owing = Machine()
        _ = owing.received(request())
        owing.replyStarted()
        guard case .closeIfIdle = owing.malformed(connectionClosed: false) else { Issue.record("refused out of turn"); return }
        #expect(!owing.takesRequests)
        do { let value = owing.mayRefuse(); #expect(!value) }
    }

    @Test func anIdleConnectionClosesAtTheSecondCheckWithoutTraffic() {
        var machine = Machine()
        do { let value = machine.idleCheck(); #expect(!value) }  // active since the connection opened
        do { let value = machine.idleCheck(); #expect(value) }
        var busy = Machine()
        _ = busy.idleCheck()
        _ = busy.received(request())
        busy.replyStarted()
        do { let value = busy.idleCheck(); #expect(!value) }
    }

    @Test func aClosedConnectionWritesNoLateReply() {
        var machine = Machine()
        _ = machine.received(request())
        machine.replyStarted()
        do { let value = machine.inactive(); #expect(value == nil) }
        do { let value = machine.replyComputed(); #expect(!value) }
        do { let value = machine.nextWaiting(); #expect(value == nil) }
    }

    // MARK: - The handler on a test channel

    struct Responder: HTTPResponder {
        func immediate(_ head: HTTPRequestHead) -> PreparedReply? {
            head.uri == "/now" ? PreparedReply(Reply(status: .ok, headers: [], body: .bytes(ByteBuffer(string: "now")))) : nil
        }

        func respond(_ head: HTTPRequestHead, body: ByteBuffer?) async -> PreparedReply {
            if head.uri == "/slow" { try? await Task.sleep(for: .milliseconds(50)) }
            return PreparedReply(Reply(status: .ok, headers: [], body: .bytes(ByteBuffer(string: "later \(head.uri)"))))
        }
    }

    func channel() async throws -> NIOAsyncTestingChannel {
        try await NIOAsyncTestingChannel { channel in
            // As HTTPServer's child channels are set up.
            try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(HTTPRequestDecoder(leftOverBytesStrategy: .dropBytes)))
            try channel.pipeline.syncOperations.addHandler(HTTPConnection(responder: Responder(), idleTimeout: .seconds(60)))
        }
    }

    func output(_ channel: NIOAsyncTestingChannel, until count: Int) async throws -> String {
        var text = ""
        while text.components(separatedBy: "HTTP/1.1 200").count - 1 < count {
            let data = try await channel.waitForOutboundWrite(as: IOData.self)
            if case .byteBuffer(let buffer) = data { text += String(buffer: buffer) }
        }
        return text
    }

    @Test func pipelinedRepliesGoOutInRequestOrderWhateverTheirSpeed() async throws {
        let channel = try await channel()
        try await channel.writeInbound(ByteBuffer(string: "GET /slow HTTP/1.1\r\nHost: x\r\n\r\nGET /now HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\n"))
        let text = try await output(channel, until: 3)
        let slow = try #require(text.range(of: "later /slow")), now = try #require(text.range(of: "now")), b = try #require(text.range(of: "later /b"))
        #expect(slow.lowerBound < now.lowerBound && now.lowerBound < b.lowerBound)
        _ = try? await channel.finish()
    }

    @Test func malformedInputGetsA400AndTheConnectionCloses() async throws {
        let channel = try await channel()
        _ = try? await channel.writeInbound(ByteBuffer(string: "NOT HTTP AT ALL\r\n\r\n"))
        let data = try await channel.waitForOutboundWrite(as: IOData.self)
        guard case .byteBuffer(let buffer) = data else { Issue.record("no reply"); return }
        #expect(String(buffer: buffer).hasPrefix("HTTP/1.1 400"))
        #expect(String(buffer: buffer).contains("Connection: close"))
        _ = try? await channel.finish()
    }
}

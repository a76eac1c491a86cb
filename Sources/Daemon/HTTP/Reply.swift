import NIOCore
import NIOHTTP1

/// One response, independent of how it goes on the wire. The connection handler adds the
/// framing headers (Content-Length, Date, Connection) and writes it.
struct Reply: Sendable {
    enum Body: Sendable {
        case empty
        case bytes(ByteBuffer)
        /// `length` bytes of a file from `offset`, written with sendfile(2).
        case file(path: String, offset: Int, length: Int)
        /// A Server-Sent Events stream: the head, then events as they are published, in chunks,
        /// until the client goes away.
        case events(EventStream)
    }

    var status: HTTPResponseStatus
    /// Headers other than the framing ones.
    var headers: [(String, String)]
    var body: Body
    /// Content-Length when the body is not sent (HEAD, 304 keeps none).
    var declaredLength: Int?

    init(status: HTTPResponseStatus, headers: [(String, String)] = [], body: Body = .empty, declaredLength: Int? = nil) {
        self.status = status
        self.headers = headers
        self.body = body
        self.declaredLength = declaredLength
    }

    var contentLength: Int? {
        switch body {
        case .bytes(let buffer): buffer.readableBytes
        case .file(_, _, let length): length
        case .events: nil
        case .empty: declaredLength ?? (status == .notModified ? nil : 0)
        }
    }

    /// The body dropped for HEAD, its length kept.
    func withoutBody() -> Reply {
        var reply = self
        reply.declaredLength = contentLength
        reply.body = .empty
        return reply
    }
}

/// The status line and the reply's own headers as bytes: what stays the same for every
/// request answered with the same reply, so the hot path copies instead of formatting.
struct EncodedHead: Sendable {
    let bytes: ByteBuffer

    init(bytes: ByteBuffer) {
        self.bytes = bytes
    }

    init(_ reply: Reply) {
        var buffer = ByteBuffer()
        buffer.reserveCapacity(256)
        buffer.writeString("HTTP/1.1 \(reply.status.code) \(reply.status.reasonPhrase)\r\nServer: cenariusd\r\n")
        for (name, value) in reply.headers {
            buffer.writeString(name)
            buffer.writeStaticString(": ")
            buffer.writeString(value)
            buffer.writeStaticString("\r\n")
        }
        if let length = reply.contentLength {
            buffer.writeStaticString("Content-Length: ")
            buffer.writeString(String(length))
            buffer.writeStaticString("\r\n")
        }
        bytes = buffer
    }
}

/// What a reply needs to become an event stream: where the events come from, and the id of the
/// last one the client saw (its `Last-Event-ID`).
struct EventStream: Sendable {
    let hub: EventHub
    let lastEventID: Int?
}

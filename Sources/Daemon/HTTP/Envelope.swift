import FoundationEssentials
import NIOCore
import NIOHTTP1
import RouteSync

/// The one JSON shape of every error the daemon returns:
/// `{"id","action","version":1,"error":<exit code>,"desc":"NOT_FOUND","result":null}` plus a message.
struct Envelope: Encodable {
    var id: String
    var action: String
    var version = 1
    var error: Int32
    var desc: String
    var message: String?
    var result: String? = nil

    enum CodingKeys: String, CodingKey { case id, action, version, error, desc, message, result }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(action, forKey: .action)
        try c.encode(version, forKey: .version)
        try c.encode(error, forKey: .error)
        try c.encode(desc, forKey: .desc)
        try c.encodeIfPresent(message, forKey: .message)
        try c.encodeNil(forKey: .result)
    }

    static func status(for code: CenariusError.Code) -> HTTPResponseStatus {
        switch code {
        case .ok: .ok
        case .notFound: .notFound
        case .remote, .integrity: .badGateway
        case .storage, .internal: .internalServerError
        case .usage: .badRequest
        }
    }

    /// The status an error is answered with: its own (`CenariusError.httpStatus`), else its code's.
    static func status(for error: CenariusError) -> HTTPResponseStatus {
        error.httpStatus.map { HTTPResponseStatus(statusCode: $0) } ?? status(for: error.code)
    }

    static func reply(_ error: CenariusError, id: String, action: String) -> PreparedReply {
        let envelope = Envelope(id: id, action: action, error: error.code.rawValue, desc: error.code.name, message: error.message)
        return JSONBody.reply(envelope, status: status(for: error))
    }
}

enum JSONBody {
    static func reply(_ value: some Encodable, status: HTTPResponseStatus = .ok) -> PreparedReply {
        reply(body: bytes(value), status: status)
    }

    /// A JSON line a record wrote itself (`Resolution.jsonText`), sent as every JSON reply is.
    static func reply(line: String) -> PreparedReply {
        reply(body: ByteBuffer(string: line + "\n"), status: .ok)
    }

    private static func reply(body: ByteBuffer, status: HTTPResponseStatus) -> PreparedReply {
        PreparedReply(Reply(status: status, headers: [("Content-Type", "application/json"), ("Cache-Control", "no-cache")], body: .bytes(body)))
    }

    /// One line of JSON, keys sorted (so that equal values give equal bytes, and validators).
    static func bytes(_ value: some Encodable) -> ByteBuffer {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var data = (try? encoder.encode(value)) ?? Data("{}".utf8)
        data.append(0x0A)
        return ByteBuffer(bytes: data)
    }
}

import Foundation
import Hummingbird
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

    static func status(for code: CenariusError.Code) -> HTTPResponse.Status {
        switch code {
        case .ok: .ok
        case .notFound: .notFound
        case .remote, .integrity: .badGateway
        case .storage, .internal: .internalServerError
        case .usage: .badRequest
        }
    }

    static func response(_ error: CenariusError, id: String, action: String, status: HTTPResponse.Status? = nil) -> Response {
        let envelope = Envelope(id: id, action: action, error: error.code.rawValue, desc: error.code.name, message: error.message)
        return JSONBody.response(envelope, status: status ?? Envelope.status(for: error.code))
    }
}

enum JSONBody {
    static func response(_ value: some Encodable, status: HTTPResponse.Status = .ok) -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var data = (try? encoder.encode(value)) ?? Data("{}".utf8)
        data.append(0x0A)
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        headers[.cacheControl] = "no-cache"
        headers[.contentLength] = String(data.count)
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}

import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A minimal blocking WebSocket client (RFC 6455) over a socket, for the DevTools protocol:
/// text frames out (masked, as clients must), text frames in (fragments joined), pings answered.
final class WebSocket {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    private let fd: Int32
    private var buffer: [UInt8] = []

    /// `url`: ws://127.0.0.1:PORT/path
    init(_ url: String, timeout: Double = 30) throws {
        guard url.hasPrefix("ws://"), let slash = url.dropFirst(5).firstIndex(of: "/") else { throw Failure(description: "bad url \(url)") }
        let authority = url[url.index(url.startIndex, offsetBy: 5)..<slash]
        let path = String(url[slash...])
        let port = Int(authority.split(separator: ":").last ?? "") ?? 80
        guard let fd = LoopbackSocket.connect(port: port, timeout: Int(timeout)) else { throw Failure(description: "cannot connect to \(url)") }
        self.fd = fd
        let key = Data((0..<16).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
        try sendAll(Array("GET \(path) HTTP/1.1\r\nHost: \(authority)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: 13\r\n\r\n".utf8))
        while buffer.firstRange(of: Array("\r\n\r\n".utf8)) == nil { try fill() }
        let end = buffer.firstRange(of: Array("\r\n\r\n".utf8))!
        let head = String(decoding: buffer[..<end.lowerBound], as: UTF8.self)
        buffer.removeSubrange(..<end.upperBound)
        guard head.hasPrefix("HTTP/1.1 101") else { throw Failure(description: "no websocket upgrade: \(head)") }
    }

    deinit { close(fd) }

    func send(_ text: String) throws {
        let payload = Array(text.utf8)
        var frame: [UInt8] = [0x81]
        if payload.count < 126 {
            frame.append(0x80 | UInt8(payload.count))
        } else if payload.count <= 0xFFFF {
            frame.append(0x80 | 126)
            frame += [UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        } else {
            frame.append(0x80 | 127)
            frame += (0..<8).reversed().map { UInt8((payload.count >> ($0 * 8)) & 0xFF) }
        }
        let mask = (0..<4).map { _ in UInt8.random(in: 0...255) }
        frame += mask
        frame += payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
        try sendAll(frame)
    }

    /// The next whole text message.
    func receive() throws -> String {
        var message: [UInt8] = []
        while true {
            while buffer.count < 2 { try fill() }
            let fin = buffer[0] & 0x80 != 0
            let opcode = buffer[0] & 0x0F
            var length = Int(buffer[1] & 0x7F)
            var offset = 2
            if length == 126 {
                while buffer.count < 4 { try fill() }
                length = Int(buffer[2]) << 8 | Int(buffer[3])
                offset = 4
            } else if length == 127 {
                while buffer.count < 10 { try fill() }
                length = buffer[2..<10].reduce(0) { $0 << 8 | Int($1) }
                offset = 10
            }
            while buffer.count < offset + length { try fill() }
            let payload = Array(buffer[offset..<(offset + length)])
            buffer.removeSubrange(..<(offset + length))
            switch opcode {
            case 0x8: throw Failure(description: "the browser closed the DevTools connection")
            case 0x9:
                // Ping: answer with a masked pong carrying the same bytes.
                let mask = (0..<4).map { _ in UInt8.random(in: 0...255) }
                try sendAll([0x8A, 0x80 | UInt8(payload.count)] + mask + payload.enumerated().map { $0.element ^ mask[$0.offset % 4] })
                continue
            case 0xA: continue
            default:
                message += payload
                if fin { return String(decoding: message, as: UTF8.self) }
            }
        }
    }

    private func fill() throws {
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard n > 0 else { throw Failure(description: "DevTools connection ended or timed out") }
        buffer += chunk[0..<n]
    }

    private func sendAll(_ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw Failure(description: "cannot write to the DevTools connection") }
            sent += n
        }
    }
}

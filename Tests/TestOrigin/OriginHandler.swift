import Foundation
import NIOCore

/// Parses HTTP/1.1 requests from raw bytes and writes raw responses, faults included.
final class OriginHandler: ChannelInboundHandler, @unchecked Sendable {
    // All state is touched on the channel's event loop only.
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let box: OriginBox
    private var buffer: [UInt8] = []
    private var busy = false

    init(origin: OriginBox) {
        box = origin
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var incoming = unwrapInboundIn(data)
        buffer.append(contentsOf: incoming.readBytes(length: incoming.readableBytes) ?? [])
        serveNext(context: context)
    }

    private func serveNext(context: ChannelHandlerContext) {
        guard !busy, let end = headerEnd() else { return }
        let head = String(decoding: buffer[0..<end], as: UTF8.self)
        // A body (a report's POST) is read whole before the request is served.
        let length = head.components(separatedBy: "\r\n").dropFirst().compactMap { line -> Int? in
            let parts = line.split(separator: ":", maxSplits: 1)
            guard parts.count == 2, parts[0].lowercased() == "content-length" else { return nil }
            return Int(parts[1].trimmingCharacters(in: .whitespaces))
        }.first ?? 0
        guard buffer.count >= end + 4 + length else { return }
        let body = Array(buffer[(end + 4)..<(end + 4 + length)])
        buffer.removeSubrange(0..<(end + 4 + length))
        var lines = head.components(separatedBy: "\r\n")
        let requestLine = lines.removeFirst().split(separator: " ")
        guard requestLine.count >= 2 else {
            context.close(promise: nil)
            return
        }
        var headers: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        var path = String(requestLine[1])
        if let query = path.firstIndex(of: "?") { path = String(path[..<query]) }
        path = String(path.drop(while: { $0 == "/" })).removingPercentEncoding ?? path
        let request = TestOrigin.Request(method: String(requestLine[0]), path: path, headers: headers, body: body)
        guard let origin = box.origin else { return }
        let (bytes, validators) = origin.record(request)
        let fault = origin.takeFault(path)
        busy = true
        if case .delay(let seconds) = fault {
            let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
            context.eventLoop.scheduleTask(in: .milliseconds(Int64(seconds * 1000))) { [self] in
                self.respond(context: bound.value, request: request, bytes: bytes, validators: validators, fault: nil)
            }
        } else {
            respond(context: context, request: request, bytes: bytes, validators: validators, fault: fault)
        }
    }

    private func headerEnd() -> Int? {
        guard buffer.count >= 4 else { return nil }
        for i in 0...(buffer.count - 4) where buffer[i] == 13 && buffer[i + 1] == 10 && buffer[i + 2] == 13 && buffer[i + 3] == 10 {
            return i
        }
        return nil
    }

    private func respond(context: ChannelHandlerContext, request: TestOrigin.Request, bytes: [UInt8]?, validators: Bool, fault: Fault?) {
        // As nginx (large_client_header_buffers 8k) and most CDNs do: a request header past 8 KB
        // is refused, whatever the path.
        if request.headers.values.contains(where: { $0.utf8.count > 8192 }) {
            send(context, "HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Length: 0\r\n\r\n", [])
            return
        }
        switch fault {
        case .drop:
            context.close(promise: nil)
            return
        case .status(let code, let retryAfter):
            var extra = ""
            if let retryAfter { extra = "Retry-After: \(retryAfter)\r\n" }
            send(context, "HTTP/1.1 \(code) Fault\r\nContent-Length: 0\r\n\(extra)\r\n", [])
            return
        case .redirect(let location):
            send(context, "HTTP/1.1 302 Found\r\nLocation: \(location)\r\nContent-Length: 0\r\n\r\n", [])
            return
        case .stall:
            write(context, Array("HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\nx".utf8), flush: true)
            return  // never finishes; the client's low-speed limit must end it
        case .endless:
            write(context, Array("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n".utf8), flush: true)
            pump(context, remaining: 1 << 30)
            return
        default: break
        }
        if request.method == "POST", box.origin?.isSink(request.path) == true {
            send(context, "HTTP/1.1 204 No Content\r\n\r\n", [])
            return
        }
        guard let bytes else {
            send(context, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n", [])
            return
        }
        var etag = "\"\(TestOrigin.md5(bytes))\""
        let lastModified = "Sun, 22 Nov 2026 10:00:00 GMT"
        var validatorHeaders = validators ? "ETag: \(etag)\r\nLast-Modified: \(lastModified)\r\nAccept-Ranges: bytes\r\n" : ""
        if case .etag(let forced) = fault {
            etag = forced
            validatorHeaders = "ETag: \(forced)\r\n"
        }
        if case .cached(let age, let maxAge) = fault {
            validatorHeaders += "Age: \(age)\r\nCache-Control: public, max-age=\(maxAge)\r\nDate: Thu, 26 Nov 2026 06:00:00 GMT\r\n"
        }
        if validators, let match = request.headers["if-none-match"], match == etag {
            send(context, "HTTP/1.1 304 Not Modified\r\n\(validatorHeaders)Content-Length: 0\r\n\r\n", [])
            return
        }
        var status = "200 OK"
        var body = bytes
        var rangeHeader = ""
        // One range, `bytes=a-` or `bytes=a-b`, as nginx answers it; `.ignoresRanges` answers 200 with the whole file.
        let bounds = request.headers["range"].flatMap { range -> (Int, Int?)? in
            guard range.hasPrefix("bytes=") else { return nil }
            let parts = range.dropFirst(6).split(separator: "-", omittingEmptySubsequences: false)
            guard parts.count == 2, let start = Int(parts[0]) else { return nil }
            return (start, parts[1].isEmpty ? nil : Int(parts[1]))
        }
        if fault != .ignoresRanges, let (start, last) = bounds, start < bytes.count,
           request.headers["if-range"].map({ $0 == etag || $0 == lastModified }) ?? true {
            let end = min(last ?? bytes.count - 1, bytes.count - 1)
            status = "206 Partial Content"
            body = Array(bytes[start...end])
            rangeHeader = "Content-Range: bytes \(start)-\(end)/\(bytes.count)\r\n"
        }
        let head = "HTTP/1.1 \(status)\r\nContent-Length: \(body.count)\r\n\(rangeHeader)\(validatorHeaders)Content-Type: \(request.path.hasSuffix(".html") ? "text/html" : "application/octet-stream")\r\n\r\n"
        if request.method == "HEAD" {
            send(context, head, [])
            return
        }
        switch fault {
        case .truncate:
            write(context, Array(head.utf8) + body.prefix(body.count / 2), flush: true)
            context.close(promise: nil)
        case .halfway(let pause, let cut):
            write(context, Array(head.utf8) + body.prefix(body.count / 2), flush: true)
            let (bound, rest) = (NIOLoopBound((self, context), eventLoop: context.eventLoop), Array(body.dropFirst(body.count / 2)))
            context.eventLoop.scheduleTask(in: .milliseconds(Int64(pause * 1000))) {
                let (handler, context) = bound.value
                if cut { context.close(promise: nil) } else { handler.send(context, "", rest) }
            }
        case .corrupt:
            send(context, head, body.map { $0 ^ 0x5A })
        case .chunkedUnderstated:
            var chunked: [UInt8] = []
            for start in stride(from: 0, to: body.count, by: 4096) {
                let chunk = body[start..<min(start + 4096, body.count)]
                chunked += Array((String(chunk.count, radix: 16) + "\r\n").utf8) + chunk + Array("\r\n".utf8)
            }
            chunked += Array("0\r\n\r\n".utf8)
            let understated = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: \(body.count / 10)\r\n\r\n"
            send(context, understated, chunked)
        default:
            send(context, head, body)
        }
    }

    private func send(_ context: ChannelHandlerContext, _ head: String, _ body: [UInt8]) {
        write(context, Array(head.utf8) + body, flush: true)
        busy = false
        serveNext(context: context)
    }

    private func write(_ context: ChannelHandlerContext, _ bytes: [UInt8], flush: Bool) {
        context.write(wrapOutboundOut(context.channel.allocator.buffer(bytes: bytes)), promise: nil)
        if flush { context.flush() }
    }

    private func pump(_ context: ChannelHandlerContext, remaining: Int) {
        guard remaining > 0, context.channel.isActive else { return }
        let chunk = [UInt8](repeating: 0x41, count: 64 << 10)
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        // A write that completes at once (a client reading fast) runs its callback inline: the next
        // chunk goes through the loop, or each chunk would nest a call deeper (a run of this test
        // origin once overflowed its thread's stack 50,000 frames deep, killing the test process).
        context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(bytes: chunk))).whenSuccess { [self] in
            bound.value.eventLoop.execute { self.pump(bound.value, remaining: remaining - chunk.count) }
        }
    }
}

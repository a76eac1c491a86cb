import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A forward proxy on 127.0.0.1 that tunnels `CONNECT 127.0.0.1:port`, as the proxies in front
/// of office and shop networks do for https, so that tests can run the binary with the usual
/// proxy variables. It keeps every request head it was sent (what the proxy learns), and can
/// refuse tunnels with a status of the test's choosing.
final class ConnectProxy: @unchecked Sendable {
    let port: Int
    private let listener: Int32
    private let lock = NSLock()
    private var heads: [String] = []
    private var refusal: Int?
    private var stopped = false

    init() throws {
        let cannotListen = CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: "proxy: cannot listen on 127.0.0.1"])
        guard let (fd, port) = LoopbackSocket.bind() else { throw cannotListen }
        guard listen(fd, 16) == 0 else {
            close(fd)
            throw cannotListen
        }
        self.port = port
        listener = fd
        Thread.detachNewThread { [self] in
            while true {
                let client = accept(fd, nil, nil)
                guard client >= 0 else { return }
                Thread.detachNewThread { self.serve(client) }
            }
        }
    }

    /// The request heads received so far, oldest first.
    var requests: [String] { lock.withLock { heads } }

    /// Answers every later CONNECT with `status` instead of opening the tunnel.
    func refuse(with status: Int) { lock.withLock { refusal = status } }

    /// Stops accepting; a later connection to the port is refused. Once only: a second close
    /// could close a descriptor another test has been given since.
    func stop() {
        guard lock.withLock({ () -> Bool in
            defer { stopped = true }
            return !stopped
        }) else { return }
        _ = Glibc.shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    private func serve(_ client: Int32) {
        guard let head = readHead(client) else {
            close(client)
            return
        }
        let refused = lock.withLock { () -> Int? in
            heads.append(head)
            return refusal
        }
        // Only tunnels to this machine's loopback: the tests' origins live there.
        let target = head.split(separator: " ").dropFirst().first.map(String.init) ?? ""
        guard head.hasPrefix("CONNECT 127.0.0.1:"), let port = Int(target.dropFirst("127.0.0.1:".count)) else {
            send(client, "HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            close(client)
            return
        }
        if let refused {
            send(client, "HTTP/1.1 \(refused) Refused\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            close(client)
            return
        }
        guard let upstream = LoopbackSocket.connect(port: port) else {
            send(client, "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            close(client)
            return
        }
        send(client, "HTTP/1.1 200 Connection established\r\n\r\n")
        let done = DispatchGroup()
        for (from, to) in [(client, upstream), (upstream, client)] {
            done.enter()
            Thread.detachNewThread {
                Self.pump(from, to)
                done.leave()
            }
        }
        done.wait()
        close(client)
        close(upstream)
    }

    /// The request line and headers, up to the blank line; the client sends nothing more
    /// before the proxy answers.
    private func readHead(_ fd: Int32) -> String? {
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while bytes.count < 16 << 10 {
            guard recv(fd, &byte, 1, 0) == 1 else { return nil }
            bytes.append(byte)
            if bytes.suffix(4) == [13, 10, 13, 10] { return String(decoding: bytes, as: UTF8.self) }
        }
        return nil
    }

    private func send(_ fd: Int32, _ text: String) {
        _ = text.utf8CString.withUnsafeBufferPointer { Glibc.send(fd, $0.baseAddress, $0.count - 1, Int32(MSG_NOSIGNAL)) }
    }

    private static func pump(_ from: Int32, _ to: Int32) {
        var buffer = [UInt8](repeating: 0, count: 16 << 10)
        while true {
            let count = recv(from, &buffer, buffer.count, 0)
            guard count > 0 else { break }
            var sent = 0
            while sent < count {
                let n = buffer[sent..<count].withUnsafeBytes { Glibc.send(to, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                guard n > 0 else {
                    _ = Glibc.shutdown(from, Int32(SHUT_RDWR))
                    return
                }
                sent += n
            }
        }
        _ = Glibc.shutdown(to, Int32(SHUT_WR))
    }
}

import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import ResourceCache
import ServiceLifecycle

/// `serve --peer-listen ADDR:PORT`: a second listener, read-only, from which devices on the LAN
/// take the store objects this cache holds (PeerObjectHandler), a service beside the daemon's own
/// server. Who may connect is decided at accept: an address outside `allowed` is closed before a
/// byte is read, and so is one past `--peer-max-connections` (docs/peers.md).
struct PeerListener: Service {
    let options: PeerServeOptions
    let objects: ObjectStore
    let fetching: PeerFetching
    /// Polls the origin when peers fetch a release this device does not (PeerNudge).
    let nudge: PeerNudge?
    let logger: Logger
    /// Connections with nothing read or written this long are closed.
    static let idleTimeout: TimeAmount = .seconds(15)

    struct Refused: Error {}

    func run() async throws {
        let allowed = options.allowed.isEmpty ? LANSubnets.of(bind: options.host) : options.allowed
        let slots = PeerSlots(maximum: options.maxConnections)
        let rate = PeerRate(bytesPerSecond: options.maxRate)
        let (objects, fetching, nudge) = (self.objects, self.fetching, self.nudge)
        let channel: any Channel
        do {
            channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .serverChannelOption(ChannelOptions.backlog, value: 64)
                .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
                .childChannelInitializer { channel in
                    guard let address = channel.remoteAddress?.ipAddress.flatMap(Subnet.address),
                          allowed.contains(where: { $0.contains(address) }) else {
                        return channel.eventLoop.makeFailedFuture(Refused())
                    }
                    let admission = slots.take()
                    guard admission != .refuse else { return channel.eventLoop.makeFailedFuture(Refused()) }
                    channel.closeFuture.whenComplete { _ in slots.give() }
                    return channel.eventLoop.makeCompletedFuture {
                        let pipeline = channel.pipeline.syncOperations
                        try pipeline.configureHTTPServerPipeline(withErrorHandling: true)
                        try pipeline.addHandler(IdleStateHandler(allTimeout: Self.idleTimeout))
                        try pipeline.addHandler(PeerObjectHandler(objects: objects, fetching: fetching, rate: rate, busy: admission == .busy, nudge: nudge))
                    }
                }
                .bind(host: options.host, port: options.port).get()
        } catch {
            throw HTTPServer.BindError(description: "the peer listener \(options.host):\(options.port): \(error)")
        }
        logger.info("serving peers", metadata: [
            "address": "\(options.host):\(channel.localAddress?.port ?? options.port)",
            "allowed": "\(allowed.map(\.description).joined(separator: " "))",
            "max-connections": "\(options.maxConnections)", "max-rate": "\(options.maxRate)",
        ])
        await withTaskCancellationOrGracefulShutdownHandler {
            try? await channel.closeFuture.get()
        } onCancelOrGracefulShutdown: {
            channel.close(promise: nil)
        }
    }
}

/// What `--peer-listen`, `--peer-allow`, `--peer-max-connections` and `--peer-max-rate` say.
package struct PeerServeOptions: Sendable {
    package var host: String
    package var port: Int
    /// Empty: the subnets of the interface(s) the listener is bound on.
    package var allowed: [Subnet] = []
    package var maxConnections = 16
    /// Bytes per second across every peer connection; 0: no cap.
    package var maxRate = 4 << 20

    package init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// `ADDR:PORT` or `[V6ADDR]:PORT`.
    package init?(listen text: String) {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (0...65535).contains(port) else { return nil }
        var host = String(text[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard Subnet.address(host) != nil else { return nil }
        self.init(host: host, port: port)
    }
}

extension PeerServeOptions {
    /// Whether `url` (a `--peer`) is this listener: a device never asks itself (Flatpak's LAN
    /// peering pulled from itself, flatpak#1425). A wildcard listener is every local address.
    package func isSelf(_ url: String) -> Bool {
        var rest = url.dropFirst(url.lowercased().hasPrefix("http://") ? 7 : 0)
        rest = rest.prefix { $0 != "/" }
        guard let colon = rest.lastIndex(of: ":"), Int(rest[rest.index(after: colon)...]) == port else { return false }
        var host = String(rest[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard let address = Subnet.address(host == "localhost" ? "127.0.0.1" : host), let mine = Subnet.address(self.host) else { return false }
        if address == mine { return true }
        guard mine.allSatisfy({ $0 == 0 }) else { return false }
        if address.first == 127 || address == Subnet.address("::1") { return true }
        let local = ((try? System.enumerateDevices()) ?? []).compactMap { $0.address?.ipAddress.flatMap(Subnet.address) }
        return local.contains(address)
    }
}

/// The LAN a listener bound on `bind` serves: the subnet of each interface holding that
/// address, or of every interface when it is a wildcard (`0.0.0.0`, `::`).
enum LANSubnets {
    static func of(bind: String) -> [Subnet] {
        let wildcard = Subnet.address(bind).map { $0.allSatisfy { $0 == 0 } } ?? false
        let devices = (try? System.enumerateDevices()) ?? []
        return devices.compactMap { device in
            guard let address = device.address?.ipAddress, let netmask = device.netmask?.ipAddress,
                  wildcard || Subnet.address(address) == Subnet.address(bind) else { return nil }
            return Subnet(address: address, netmask: netmask)
        }
    }
}

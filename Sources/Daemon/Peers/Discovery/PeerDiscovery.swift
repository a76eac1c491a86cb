#if canImport(Glibc)
import Glibc
#endif
import Logging
import NIOCore
import ResourceCache
import RouteSync
import ServiceLifecycle
import Synchronization

/// Finds peers by DNS-SD through the host's avahi-daemon over the system bus, and, with a peer
/// listener, announces this one (docs/peers.md): a service beside the daemon's others, its
/// blocking bus on a thread of its own. No bus, no Avahi, or either dying is a warning and an
/// empty directory (static peers only), retried; never a failed sync or a stopped daemon.
struct PeerDiscovery: Service {
    let directory: PeerDirectory
    /// The peer listener's address and port, to announce; nil: browse only.
    let listener: PeerServeOptions?
    let channel: String
    let layout: CacheLayout
    /// What this device's sync is fetching: announced beside the release in force.
    let fetching: PeerFetching
    let logger: Logger
    /// This run of the daemon: in the TXT records, so that it knows its own announcement.
    let instance = String(UInt64.random(in: 1...UInt64.max), radix: 16)
    /// Seconds between tries to reach a bus that was not there, doubled up to the last.
    static let retry = (first: 1.0, last: 30.0)

    /// Set on shutdown; the thread sees it within a second.
    final class Stopping: Sendable {
        private let flag = Atomic<Bool>(false)
        func stop() { flag.store(true, ordering: .relaxed) }
        var stopped: Bool { flag.load(ordering: .relaxed) }
    }

    func run() async throws {
        let stopping = Stopping()
        await withTaskCancellationOrGracefulShutdownHandler {
            await onThread("cenariusd-dnssd") { loop(stopping) }
        } onCancelOrGracefulShutdown: {
            stopping.stop()
        }
    }

    private func loop(_ stopping: Stopping) {
        var wait = Self.retry.first
        var warned = false
        while !stopping.stopped {
            if let bus = DBusConnection(timeout: 5) {
                var session = DiscoverySession(client: AvahiClient(bus: bus), discovery: self)
                warned = session.run(stopping, warned: warned)
                wait = Self.retry.first
            } else {
                directory.settle()
                if !warned {
                    logger.warning("no system bus: peers are not found by DNS-SD (static peers only) until it is there",
                                   metadata: ["bus": "\(DBusConnection.systemBusPath())"])
                }
                warned = true
            }
            directory.clear()
            let until = FileSystem.monotonic() + wait
            while !stopping.stopped && FileSystem.monotonic() < until { usleep(200_000) }
            wait = min(wait * 2, Self.retry.last)
        }
    }

    /// The interface Avahi announces on: the one holding the listening address (a peer on
    /// another interface would be refused by the listener), or every one for a wildcard.
    func announceInterface(_ listener: PeerServeOptions) -> Int32 {
        guard let wanted = Subnet.address(listener.host), !wanted.allSatisfy({ $0 == 0 }) else { return AvahiClient.anyInterface }
        let devices = (try? System.enumerateDevices()) ?? []
        guard let device = devices.first(where: { $0.address?.ipAddress.flatMap(Subnet.address) == wanted }) else { return AvahiClient.anyInterface }
        return Int32(device.interfaceIndex)
    }

    /// What this device holds now: the release in force, as its generation's meta says, and the one
    /// its sync is fetching.
    func announcement(_ generation: Int?, fetching: String?) -> PeerAnnouncement {
        let meta = generation.flatMap { try? GenerationStore(layout: layout).generation($0).meta() }
        return PeerAnnouncement(channel: channel, release: meta?.tableSHA256, version: meta?.headVersion ?? meta?.signedVersion,
                                instance: instance, fetching: fetching)
    }
}

/// One connection to the bus: announce and browse while avahi-daemon is there, again each time
/// it (re)appears on the bus, and announce again when the release in force changes.
private struct DiscoverySession {
    let client: AvahiClient
    let discovery: PeerDiscovery
    var directory: PeerDirectory { discovery.directory }
    var logger: Logger { discovery.logger }
    var group: String?
    var browser: String?
    var generation: Int?
    /// The release the announcement says is being fetched.
    var fetching: String?
    var name: String

    init(client: AvahiClient, discovery: PeerDiscovery) {
        self.client = client
        self.discovery = discovery
        name = "cenarius-" + discovery.instance
    }

    /// Until the bus closes or the daemon stops; returns whether a warning about Avahi is out.
    mutating func run(_ stopping: PeerDiscovery.Stopping, warned: Bool) -> Bool {
        var warned = warned
        for rule in AvahiClient.matches where !client.bus.addMatch(rule) {
            directory.settle()
            logger.warning("the system bus refused a match rule: peers are not found by DNS-SD", metadata: ["rule": "\(rule)"])
            return true
        }
        if start() {
            warned = false
        } else {
            directory.settle()
            if !warned {
                logger.warning("avahi-daemon is not on the system bus: peers are not found by DNS-SD (static peers only) until it starts")
            }
            warned = true
        }
        while !stopping.stopped {
            switch client.bus.next(timeout: 1) {
            case .closed:
                logger.warning("the system bus closed: peers found by DNS-SD are forgotten (static peers only) until it is back")
                return true
            case .timeout:
                break
            case .message(let signal):
                handle(signal, warned: &warned)
            }
            let now = GenerationStore.currentNumber(link: discovery.layout.current)
            let fetchingNow = discovery.fetching.current?.fetching
            if now != generation || fetchingNow != fetching, group != nil {
                (generation, fetching) = (now, fetchingNow)
                announce(reset: true)
            }
        }
        return warned
    }

    /// Announces (with a listener) and starts browsing; false when Avahi is not there.
    mutating func start() -> Bool {
        group = nil
        browser = nil
        directory.clear()
        do {
            if discovery.listener != nil {
                group = try client.entryGroupNew()
                generation = GenerationStore.currentNumber(link: discovery.layout.current)
                fetching = discovery.fetching.current?.fetching
                announce(reset: false)
            }
            browser = try client.browse()
            logger.info("finding peers by DNS-SD", metadata: [
                "service": "\(PeerAnnouncement.serviceType)", "channel": "\(discovery.channel)",
                "announced": "\(discovery.listener.map { "\($0.host):\($0.port)" } ?? "no (no --peer-listen)")",
            ])
            return true
        } catch {
            logger.debug("avahi-daemon did not answer", metadata: ["error": "\(error)"])
            return false
        }
    }

    mutating func announce(reset: Bool) {
        // A listener on port 0 has a port only it knows: nothing to announce.
        guard let group, let listener = discovery.listener, listener.port > 0 else { return }
        let said = discovery.announcement(generation, fetching: fetching)
        do {
            try client.publish(group: group, interface: discovery.announceInterface(listener), name: name,
                               port: UInt16(clamping: listener.port), txt: said.txt, reset: reset)
            logger.debug("announced", metadata: ["name": "\(name)", "release": "\(said.rel ?? "-")"])
        } catch {
            logger.warning("avahi-daemon refused the announcement", metadata: ["error": "\(error)"])
        }
    }

    mutating func handle(_ signal: DBusMessage, warned: inout Bool) {
        switch (signal.interface, signal.member) {
        case ("org.freedesktop.DBus", "NameOwnerChanged"):
            var values = signal.values
            guard values.string() == AvahiClient.name, values.string() != nil, let owner = values.string() else { return }
            if owner.isEmpty {
                group = nil
                browser = nil
                directory.clear()
                logger.warning("avahi-daemon left the system bus: peers found by DNS-SD are forgotten (static peers only) until it is back")
                warned = true
            } else if start() {
                logger.info("avahi-daemon is back: announcing and browsing again")
                warned = false
            }
        case (AvahiClient.serviceBrowser, "ItemNew") where signal.path == browser:
            guard let item = AvahiClient.Item(signal), item.flags & AvahiClient.ourOwn == 0 else { return }
            found(item)
        case (AvahiClient.serviceBrowser, "AllForNow") where signal.path == browser:
            // What the LAN answered at first is in (each ItemNew was resolved as it came).
            directory.settle()
        case (AvahiClient.serviceBrowser, "Failure") where signal.path == browser:
            directory.settle()
            var values = signal.values
            logger.warning("avahi-daemon's browse failed: peers are not found by DNS-SD", metadata: ["error": "\(values.string() ?? "")"])
        case (AvahiClient.serviceBrowser, "ItemRemove") where signal.path == browser:
            guard let item = AvahiClient.Item(signal) else { return }
            directory.remove(item.key)
            logger.debug("a peer left", metadata: ["name": "\(item.name)"])
        case (AvahiClient.entryGroup, "StateChanged") where signal.path == group:
            var values = signal.values
            guard let state = values.int32() else { return }
            if state == AvahiClient.collision {
                // Another device on the LAN took the name: announce under a new one.
                name = "cenarius-" + String(UInt64.random(in: 1...UInt64.max), radix: 16)
                announce(reset: true)
            } else if state == AvahiClient.failure {
                logger.warning("avahi-daemon could not announce this peer", metadata: ["error": "\(values.string() ?? "")"])
            }
        default:
            break
        }
    }

    /// A peer is used when its records are of this format, on this channel, and not this daemon's own.
    func found(_ item: AvahiClient.Item) {
        let resolved: AvahiClient.Resolved
        do { resolved = try client.resolve(item) } catch {
            logger.debug("a peer did not resolve", metadata: ["name": "\(item.name)", "error": "\(error)"])
            return
        }
        let url = "http://\(resolved.address):\(resolved.port)"
        let said = PeerAnnouncement(txt: resolved.txt)
        if let said, said.instance == discovery.instance, Subnet.address(resolved.address) != nil {
            // This daemon as the LAN sees it: its own place among the peers when shares are dealt.
            directory.claim(url)
            return
        }
        guard resolved.flags & AvahiClient.ourOwn == 0, let said,
              said.instance != discovery.instance, said.channel == discovery.channel, Subnet.address(resolved.address) != nil else {
            logger.debug("a peer not for this device", metadata: ["name": "\(item.name)"])
            return
        }
        if let listener = discovery.listener, listener.isSelf(url) { return }
        directory.set(item.key, PeerDirectory.Found(url: url, releases: said.releases))
        logger.info("found a peer", metadata: ["url": "\(url)", "release": "\(said.rel ?? "-")"])
    }
}

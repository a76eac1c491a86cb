import RawStructuredFieldValues
import RouteSync

/// What every table request says about the device (`Cenarius-Report`, an RFC 9651 dictionary):
///
///     device="3f2a9c0d1e4b5a67", release="2026.11-a", state=trial, failed=("2026.11-b"), native="2.3.0", why=trial
///
/// The origin's access log is the fleet's report channel: no extra request, no server of our own.
/// Written and read with apple's swift-http-structured-headers, never by hand.
package struct FleetReport: Sendable, Equatable {
    package enum State: String, Sendable, CaseIterable {
        case confirmed, trial, deferred, held
    }

    /// A hash of the device id (`DeviceHash`), never the id itself.
    package var device: String
    /// The release in force: its manifest's name, else a short hash of its table.
    package var release: String
    package var state: State
    /// Releases this device rolled back or refused lately, newest first.
    package var failed: [String]
    /// The host version, when the device knows it.
    package var native: String?
    /// `cenariusd why`'s code for the newest release (docs/why.md), as of the poll before this one.
    package var why: WhyReason?
    /// The files' bytes the release in force took from LAN peers and from the origin, when peers
    /// gave any (docs/peers.md): `peer=N, origin=M`.
    package var peerBytes: Int64?
    package var originBytes: Int64?

    /// The header's name, as the origin's log format refers to it (`$http_cenarius_report`).
    package static let headerName = "Cenarius-Report"
    /// A report never costs a poll more than this (B7's byte bar counts every poll).
    package static let maxBytes = 256
    /// At most this many failed releases are reported.
    package static let maxFailed = 4

    package init(device: String, release: String, state: State, failed: [String] = [], native: String? = nil, why: WhyReason? = nil) {
        self.device = device
        self.release = release
        self.state = state
        self.failed = failed
        self.native = native
        self.why = why
    }

    /// The header value, at most `maxBytes`: the oldest failed releases are dropped first, then the
    /// host version; nil when even the rest does not fit (a release name of hundreds of bytes).
    package func headerValue() -> String? {
        var report = self
        report.failed = Array(report.failed.prefix(Self.maxFailed))
        while true {
            if let bytes = try? report.serialized(), bytes.count <= Self.maxBytes { return String(decoding: bytes, as: UTF8.self) }
            if report.peerBytes != nil { (report.peerBytes, report.originBytes) = (nil, nil) }
            else if !report.failed.isEmpty { report.failed.removeLast() } else if report.native != nil { report.native = nil }
            else if report.why != nil { report.why = nil } else { return nil }
        }
    }

    private func serialized() throws -> [UInt8] {
        func item(_ bare: RFC9651BareItem) -> Item { Item(bareItem: bare, parameters: OrderedMap<String, RFC9651BareItem>()) }
        var map = OrderedMap<String, ItemOrInnerList>()
        map["device"] = .item(item(.string(device)))
        map["release"] = .item(item(.string(release)))
        map["state"] = .item(item(.token(state.rawValue)))
        if !failed.isEmpty {
            var list = BareInnerList()
            for name in failed { list.append(item(.string(name))) }
            map["failed"] = .innerList(InnerList(bareInnerList: list, parameters: OrderedMap<String, RFC9651BareItem>()))
        }
        if let native { map["native"] = .item(item(.string(native))) }
        if let why { map["why"] = .item(item(.token(why.rawValue))) }
        // RFC 9651 integers stop at 15 digits: a petabyte of one release is beyond any device.
        if let peerBytes, let originBytes {
            map["peer"] = .item(item(.integer(min(peerBytes, 999_999_999_999_999))))
            map["origin"] = .item(item(.integer(min(originBytes, 999_999_999_999_999))))
        }
        var serializer = StructuredFieldValueSerializer()
        return try serializer.writeDictionaryFieldValue(map)
    }

    /// A report as an origin logged it; nil for anything that is not one (a malformed or foreign header).
    /// Unknown keys are ignored, so later versions may say more.
    package init?(headerValue: some RandomAccessCollection<UInt8>) {
        guard headerValue.count <= 4096 else { return nil }
        var parser = StructuredFieldValueParser(headerValue)
        guard let map = try? parser.parseDictionaryFieldValue(),
              let device = Self.string(map["device"]), !device.isEmpty,
              let release = Self.string(map["release"]),
              case .item(let stateItem)? = map["state"], case .token(let token) = stateItem.rfc9651BareItem,
              let state = State(rawValue: token)
        else { return nil }
        var failed: [String] = []
        if case .innerList(let list)? = map["failed"] {
            for item in list.bareInnerList { if case .string(let name) = item.rfc9651BareItem { failed.append(name) } }
        }
        // A code this version does not know (a later one's) is left out, never guessed at.
        self.init(device: device, release: release, state: state, failed: failed, native: Self.string(map["native"]),
                  why: Self.string(map["why"]).flatMap(WhyReason.init(rawValue:)))
        if case .item(let peer)? = map["peer"], case .integer(let peerBytes) = peer.rfc9651BareItem, peerBytes >= 0,
           case .item(let origin)? = map["origin"], case .integer(let originBytes) = origin.rfc9651BareItem, originBytes >= 0 {
            (self.peerBytes, self.originBytes) = (Int64(peerBytes), Int64(originBytes))
        }
    }

    private static func string(_ value: ItemOrInnerList?) -> String? {
        guard case .item(let item)? = value else { return nil }
        switch item.rfc9651BareItem {
        case .string(let text), .token(let text): return text
        default: return nil
        }
    }
}

extension FleetReport {
    /// The name a release without a manifest name goes by: the first 16 hex digits of the SHA-256 of
    /// its table's exact bytes, so that devices and `fleet` agree without talking to each other.
    package static func releaseName(ofTable table: [UInt8]) -> String {
        releaseName(ofDigest: StreamingHasher.sha256Hex(table))
    }

    /// The same from the table's SHA-256 in hex, as a head names it.
    package static func releaseName(ofDigest digest: String) -> String {
        String(digest.prefix(16))
    }

    /// A hash of the device id for the report: enough to count devices, never the id itself.
    package static func deviceHash(_ deviceID: String) -> String {
        releaseName(ofTable: Array(("cenarius-device:" + deviceID).utf8))
    }
}

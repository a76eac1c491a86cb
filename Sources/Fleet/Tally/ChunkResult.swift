/// One report line, as a reader thread leaves it for the tally: 24 bytes, no String. Names are the
/// reader's own numbers (`NameTable`), which the tally maps to its own in the log's order.
struct LineEntry: Sendable {
    /// The device id's hash (`DeviceKey`).
    var key: UInt64
    var time: Double
    /// Release (bits 0–19) and failed list (20–39) in the reader's numbering, state (40–41), `why`
    /// (42–46, 0 for none, else its index in `WhyReason.allCases` + 1), bit 47 when the reader
    /// had no room left for a name of this line, and bit 48 when its peer and origin bytes are the
    /// chunk's next `PeerBytes` (few lines carry them: the entry stays 24 bytes).
    var word: UInt64

    static let noRoom: UInt64 = 1 << 47
    static let carriesBytes: UInt64 = 1 << 48

    var release: Int { Int(word & 0xF_FFFF) }
    var list: Int { Int((word >> 20) & 0xF_FFFF) }
    var stateIndex: Int { Int((word >> 40) & 3) }
    var whyIndex: Int { Int((word >> 42) & 31) }
    var hasRoom: Bool { word & Self.noRoom == 0 }

    static func word(release: Int, list: Int, state: Int, why: Int) -> UInt64 {
        UInt64(release) | UInt64(list) << 20 | UInt64(state) << 40 | UInt64(why) << 42
    }
}

/// What a reader thread made of one chunk of a log (whole lines), in the chunk's order.
struct ChunkResult: Sendable {
    /// The chunk's place among every chunk of the run: the tally takes them in this order.
    var index = 0
    /// Which reader numbered its names.
    var source = 0
    var lines = 0, malformed = 0, withoutReport = 0, beforeSince = 0
    var entries: [LineEntry] = []
    /// The bytes of the entries that carry them (`LineEntry.carriesBytes`), in their order.
    var bytes: [PeerBytes] = []
    /// Names and failed lists this reader numbered while reading the chunk, in their numbers'
    /// order from `firstName` and `firstList` on: the tally learns them before the lines that use them.
    var firstName = 0
    var names: [[UInt8]] = []
    var firstList = 0
    var lists: [[Int]] = []

    init(index: Int = 0, source: Int = 0) {
        self.index = index
        self.source = source
    }
}

/// What a device's release in force took from LAN peers and from the origin (`peer=N, origin=M`).
package struct PeerBytes: Sendable, Equatable {
    package var peer: Int64
    package var origin: Int64

    package init(peer: Int64, origin: Int64) {
        self.peer = peer
        self.origin = origin
    }
}

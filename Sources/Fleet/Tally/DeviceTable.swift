/// One device's latest report: 24 bytes (the device id's hash, the time, and the release, failed
/// list, state and `why` in one word), where a dictionary of Swift values took about 100.
struct DeviceRecord: Sendable {
    var key: UInt64
    var time: Double
    /// Release (bits 0–19), failed list (20–39), state (40–41), `why` (42–46), bit 48 when
    /// `DeviceTable.bytes` holds its peer and origin bytes, as in `LineEntry` but in the tally's own numbering.
    var word: UInt64
}

/// Devices by the hash of their id: records in the order devices first appeared, found through an
/// open-addressing index of 4-byte slots (linear probing, at most three quarters full). About 30
/// bytes a device in all: 10⁷ devices in about 300 MB.
struct DeviceTable: Sendable {
    private(set) var records: [DeviceRecord] = []
    /// Peer and origin bytes of the records that have them, by record: only devices that took
    /// bytes from peers pay for them (about 40 bytes each), the rest stay at 24.
    private(set) var bytes: [UInt32: PeerBytes] = [:]
    private var slots = [UInt32](repeating: 0, count: 1 << 12)

    var count: Int { records.count }

    /// The record of `key`, or nil and the slot where it would go.
    @inline(__always)
    func find(_ key: UInt64) -> (record: Int?, slot: Int) {
        let mask = slots.count - 1
        var slot = Int(truncatingIfNeeded: key) & mask
        while true {
            let entry = Int(slots[slot])
            if entry == 0 { return (nil, slot) }
            if records[entry - 1].key == key { return (entry - 1, slot) }
            slot = (slot + 1) & mask
        }
    }

    @inline(__always)
    mutating func update(_ record: Int, time: Double, word: UInt64) {
        if records[record].word & LineEntry.carriesBytes != 0, word & LineEntry.carriesBytes == 0 { bytes[UInt32(record)] = nil }
        records[record].time = time
        records[record].word = word
    }

    /// The latest report of `record` carried these bytes.
    mutating func setBytes(_ record: Int, _ value: PeerBytes) { bytes[UInt32(record)] = value }

    /// Adds `key` at the empty `slot` that `find` gave.
    @inline(__always)
    mutating func insert(_ key: UInt64, at slot: Int, time: Double, word: UInt64) {
        records.append(DeviceRecord(key: key, time: time, word: word))
        slots[slot] = UInt32(records.count)
        if records.count * 4 > slots.count * 3 { grow() }
    }

    private mutating func grow() {
        // The old index goes first: only the records are read to rebuild it.
        let size = slots.count * 2
        slots = []
        var fresh = [UInt32](repeating: 0, count: size)
        let mask = fresh.count - 1
        for (index, record) in records.enumerated() {
            var slot = Int(truncatingIfNeeded: record.key) & mask
            while fresh[slot] != 0 { slot = (slot + 1) & mask }
            fresh[slot] = UInt32(index + 1)
        }
        slots = fresh
    }
}

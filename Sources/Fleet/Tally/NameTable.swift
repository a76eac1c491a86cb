#if canImport(Glibc)
import Glibc
#endif

/// Byte strings numbered in the order first seen, looked up without making a String: one per
/// reader thread, for the release names of the lines it reads. Bounded in count and bytes, since
/// one forged report can carry a new name per line.
struct NameTable: Sendable {
    static let maxNames = 1 << 17
    static let maxBytes = 8 << 20

    private var slots = [UInt32](repeating: 0, count: 1024)
    private var hashes: [Int] = []
    private var ends: [UInt32] = []
    private(set) var bytes: [UInt8] = []

    /// The names looked up last: a log repeats a few release names on most lines, and comparing
    /// them first spares hashing the name.
    private var recent: (Int, Int, Int, Int) = (-1, -1, -1, -1)

    var count: Int { ends.count }

    /// The bytes of name `id`.
    func name(_ id: Int) -> ArraySlice<UInt8> { bytes[(id == 0 ? 0 : Int(ends[id - 1]))..<Int(ends[id])] }

    /// The id of `name`, numbering it if new; nil when new and the table is full.
    @inline(__always)
    mutating func id(_ name: UnsafeRawBufferPointer) -> Int? {
        if recent.0 >= 0 && equals(recent.0, name) { return recent.0 }
        if recent.1 >= 0 && equals(recent.1, name) { return recent.1 }
        if recent.2 >= 0 && equals(recent.2, name) { return recent.2 }
        if recent.3 >= 0 && equals(recent.3, name) { return recent.3 }
        guard let id = lookUp(name) else { return nil }
        recent = (id, recent.0, recent.1, recent.2)
        return id
    }

    @inline(__always)
    private func equals(_ id: Int, _ name: UnsafeRawBufferPointer) -> Bool {
        let start = id == 0 ? 0 : Int(ends[id - 1])
        let length = Int(ends[id]) - start
        return length == name.count && (length == 0 || bytes.withUnsafeBytes { Words.equal($0.baseAddress! + start, name.baseAddress!, length) })
    }

    private mutating func lookUp(_ name: UnsafeRawBufferPointer) -> Int? {
        var hasher = Hasher()
        hasher.combine(bytes: name)
        let hash = hasher.finalize()
        let mask = slots.count - 1
        var slot = hash & mask
        while true {
            let entry = Int(slots[slot])
            if entry == 0 { break }
            let id = entry - 1
            if hashes[id] == hash && equals(id, name) { return id }
            slot = (slot + 1) & mask
        }
        guard ends.count < Self.maxNames, bytes.count + name.count <= Self.maxBytes else { return nil }
        let id = ends.count
        bytes.append(contentsOf: name)
        ends.append(UInt32(bytes.count))
        hashes.append(hash)
        slots[slot] = UInt32(id + 1)
        if ends.count * 2 > slots.count { grow() }
        return id
    }

    private mutating func grow() {
        slots = [UInt32](repeating: 0, count: slots.count * 2)
        let mask = slots.count - 1
        for (id, hash) in hashes.enumerated() {
            var slot = hash & mask
            while slots[slot] != 0 { slot = (slot + 1) & mask }
            slots[slot] = UInt32(id + 1)
        }
    }
}

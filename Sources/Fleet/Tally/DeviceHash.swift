/// A device id's 64-bit key: SipHash-1-3 (the function Swift's `Hasher` uses) with a key drawn at
/// random for each run, written out here because `Hasher`'s general interface cost a tenth of a
/// line's time. Keyed, so that forged ids cannot be made to collide with a real one; 10⁷ ids
/// collide by chance with odds of about 1 in 4×10⁵.
package struct DeviceHash: Sendable {
    let k0: UInt64, k1: UInt64

    package init() {
        var random = SystemRandomNumberGenerator()
        k0 = random.next()
        k1 = random.next()
    }

    package init(k0: UInt64, k1: UInt64) {
        self.k0 = k0
        self.k1 = k1
    }

    @inline(__always)
    package func callAsFunction(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var v0 = k0 ^ 0x736F_6D65_7073_6575, v1 = k1 ^ 0x646F_7261_6E64_6F6D
        var v2 = k0 ^ 0x6C79_6765_6E65_7261, v3 = k1 ^ 0x7465_6462_7974_6573
        @inline(__always) func round() {
            v0 &+= v1; v1 = v1.rotated(13); v1 ^= v0; v0 = v0.rotated(32)
            v2 &+= v3; v3 = v3.rotated(16); v3 ^= v2
            v0 &+= v3; v3 = v3.rotated(21); v3 ^= v0
            v2 &+= v1; v1 = v1.rotated(17); v1 ^= v2; v2 = v2.rotated(32)
        }
        let count = bytes.count
        var index = 0
        if let base = bytes.baseAddress {
            while index + 8 <= count {
                let m = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: index, as: UInt64.self))
                v3 ^= m
                round()
                v0 ^= m
                index += 8
            }
        }
        var last = UInt64(truncatingIfNeeded: count) << 56
        var shift: UInt64 = 0
        while index < count {
            last |= UInt64(bytes[index]) << shift
            shift += 8
            index += 1
        }
        v3 ^= last
        round()
        v0 ^= last
        v2 ^= 0xFF
        round()
        round()
        round()
        return v0 ^ v1 ^ v2 ^ v3
    }
}

extension UInt64 {
    @inline(__always) fileprivate func rotated(_ count: UInt64) -> UInt64 { self << count | self >> (64 - count) }
}

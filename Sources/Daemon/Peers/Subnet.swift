#if canImport(Glibc)
import Glibc
#endif

/// An address range (`192.168.1.0/24`, `fd00::/8`): who may ask this device's peer listener for
/// objects (docs/peers.md). Addresses are compared as bytes; an IPv4 client reaching a listener
/// bound on `::` arrives as `::ffff:a.b.c.d` and is compared as the IPv4 address it is.
package struct Subnet: Sendable, Equatable, CustomStringConvertible {
    package let bytes: [UInt8]
    package let prefix: Int

    package init?(bytes: [UInt8], prefix: Int) {
        guard bytes.count == 4 || bytes.count == 16, prefix >= 0, prefix <= bytes.count * 8 else { return nil }
        self.bytes = bytes
        self.prefix = prefix
    }

    /// `ADDRESS/BITS`, or an address alone (one host).
    package init?(cidr text: String) {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let bytes = Self.address(String(parts[0])) else { return nil }
        var prefix = bytes.count * 8
        if parts.count == 2 {
            guard let bits = Int(parts[1]) else { return nil }
            prefix = bits
        }
        self.init(bytes: bytes, prefix: prefix)
    }

    /// The subnet of an interface's address and netmask (both as text).
    package init?(address: String, netmask: String) {
        guard let bytes = Self.address(address), let mask = Self.address(netmask), mask.count == bytes.count else { return nil }
        self.init(bytes: bytes, prefix: mask.reduce(0) { $0 + $1.nonzeroBitCount })
    }

    package var description: String {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        var raw = bytes
        _ = inet_ntop(bytes.count == 4 ? AF_INET : AF_INET6, &raw, &text, socklen_t(text.count))
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) + "/\(prefix)"
    }

    package func contains(_ address: [UInt8]) -> Bool {
        let address = Self.unmapped(address)
        guard address.count == bytes.count else { return false }
        var left = prefix
        for (mine, theirs) in zip(bytes, address) where left > 0 {
            let bits = min(8, left)
            let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - bits))
            if mine & mask != theirs & mask { return false }
            left -= bits
        }
        return true
    }

    /// The bytes of a textual IPv4 or IPv6 address (a zone, `%eth0`, is dropped), IPv4-mapped ones as IPv4.
    package static func address(_ text: String) -> [UInt8]? {
        let plain = String(text.prefix { $0 != "%" })
        var four = in_addr()
        if inet_pton(AF_INET, plain, &four) == 1 { return withUnsafeBytes(of: &four) { Array($0) } }
        var six = in6_addr()
        if inet_pton(AF_INET6, plain, &six) == 1 { return unmapped(withUnsafeBytes(of: &six) { Array($0) }) }
        return nil
    }

    private static func unmapped(_ bytes: [UInt8]) -> [UInt8] {
        guard bytes.count == 16, bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF else { return bytes }
        return Array(bytes[12...])
    }
}

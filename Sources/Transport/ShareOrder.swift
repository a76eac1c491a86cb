/// The order an owner fetches its share's forms in and its peers ask for them (docs/peers.md): the
/// largest first, since it is the longest on the uplink and its askers take it as it arrives; then
/// the rest smallest first, so that what a peer asks for next is what its owner has whole or is
/// fetching now, not what it will start last.
package enum ShareOrder {
    /// Indices of `sizes` in that order; unknown sizes last, ties in their given order.
    package static func indices(_ sizes: [Int64?]) -> [Int] {
        let known = sizes.indices.filter { sizes[$0] != nil }
        guard let largest = known.max(by: { (sizes[$0]!, $1) < (sizes[$1]!, $0) }) else { return Array(sizes.indices) }
        let rest = sizes.indices.filter { $0 != largest }.sorted { (sizes[$0] ?? .max, $0) < (sizes[$1] ?? .max, $1) }
        return [largest] + rest
    }
}

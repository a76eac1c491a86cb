package import RouteSync

/// `trust.json` in the cache: the rotations a device followed (docs/signing.md).
package struct TrustStore: Sendable {
    package let layout: CacheLayout

    package init(layout: CacheLayout) {
        self.layout = layout
    }

    package func read() throws(CenariusError) -> TrustState {
        guard FileSystem.exists(layout.trust) else { return TrustState() }
        return try TrustState.parse(FileSystem.readFile(layout.trust, limit: 1 << 20), source: layout.trust)
    }

    package func write(_ state: TrustState) throws(CenariusError) {
        try FileSystem.writeAtomically(state.serialized(), to: layout.trust)
    }
}

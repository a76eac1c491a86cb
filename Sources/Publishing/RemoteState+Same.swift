extension RemoteState {
    /// Whether `other` holds exactly what this state does — every name with its size, time and
    /// ETag, the head, the table and its sidecars — but for the publish lock itself and the store
    /// objects of `written` (a release's own, written while its lock settled: content-addressed,
    /// so whatever a listing shows under those names is those bytes): a release staged on one is
    /// the release staged on the other.
    package func holdsTheSame(as other: RemoteState, besides written: Set<String> = []) -> Bool {
        var mine = objects, theirs = other.objects
        for key in written.union([LockHolder.key]) {
            mine[key] = nil
            theirs[key] = nil
        }
        return mine == theirs && channel == other.channel && routesName == other.routesName && headBytes == other.headBytes
            && tableBytes == other.tableBytes && sidecar == other.sidecar && manifest == other.manifest
    }
}

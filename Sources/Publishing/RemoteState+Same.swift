extension RemoteState {
    /// Whether `other` holds exactly what this state does — every name with its size, time and
    /// ETag, the head, the table and its sidecars — but for the publish lock itself: a release
    /// staged on one is the release staged on the other.
    package func holdsTheSame(as other: RemoteState) -> Bool {
        var mine = objects, theirs = other.objects
        mine[LockHolder.key] = nil
        theirs[LockHolder.key] = nil
        return mine == theirs && channel == other.channel && routesName == other.routesName && headBytes == other.headBytes
            && tableBytes == other.tableBytes && sidecar == other.sidecar && manifest == other.manifest
    }
}

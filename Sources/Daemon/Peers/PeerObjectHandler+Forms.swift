import NIOCore
import NIOHTTP1
import ResourceCache
import RouteSync

/// A form this device took from the origin for its share and kept (PeerForms): its bytes as the
/// origin published them, never compressed again; the asker decodes it and checks the file it
/// gives against the signed table's hash (docs/peers.md).
extension PeerObjectHandler {
    /// How long an asker waits here for a form (or an object of its share) this device is about to fetch before it is told
    /// "not yet": its peers ask for its share in the order it fetches it (ShareOrder), so the one
    /// asked for is seldom more than a moment from its first bytes. Well under the asker's 3 s
    /// without a byte (PeerSources.timeout).
    static let holdLimit = 1.0

    func respondForm(to head: HTTPRequestHead, context: ChannelHandlerContext) {
        guard head.uri.hasPrefix("/"), let (name, target) = PeerForms.name(head.uri.dropFirst()) else {
            return answer(.notFound, "not an object this device holds\n", head: head, context: context)
        }
        respondForm(name, target, head: head, context: context, until: Self.now() + Self.holdLimit)
    }

    /// The form kept whole, or as it arrives; a `404` when this device holds the file but not that
    /// form (it came another way) or is not fetching it (the asker asks for the file, or the origin,
    /// now); else, once its download has not begun by `deadline`, "not yet", as for the file.
    private func respondForm(_ name: String, _ target: ContentHash, head: HTTPRequestHead, context: ChannelHandlerContext, until deadline: Double) {
        sending = false
        let path = forms.path(name)
        if FileSystem.regularFileSize(path) != nil { return sendFile(path, head: head, context: context) }
        guard !objects.contains(target) else { return answer(.notFound, "no such form on this device\n", head: head, context: context) }
        guard fetching.contains(target) else { return missing(head, context: context) }
        sendArriving(name, holding: true, head: head, context: context, until: deadline) { handler, context in
            handler.respondForm(name, target, head: head, context: context, until: deadline)
        }
    }
}

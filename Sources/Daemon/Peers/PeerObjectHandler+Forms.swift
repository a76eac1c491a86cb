import NIOCore
import NIOHTTP1
import ResourceCache
import RouteSync

/// A form this device took from the origin for its share and kept (PeerForms): its bytes as the
/// origin published them, never compressed again; the asker decodes it and checks the file it
/// gives against the signed table's hash (docs/peers.md).
extension PeerObjectHandler {
    func respondForm(to head: HTTPRequestHead, context: ChannelHandlerContext) {
        guard head.uri.hasPrefix("/"), let (name, target) = PeerForms.name(head.uri.dropFirst()) else {
            return answer(.notFound, "not an object this device holds\n", head: head, context: context)
        }
        let path = forms.path(name)
        if FileSystem.regularFileSize(path) != nil { return sendFile(path, head: head, context: context) }
        // Holding the file without this form (it came another way), or not fetching it: the asker
        // asks for the file, or the origin, now; still on its way here: "not yet", as for the file.
        guard !objects.contains(target), fetching.contains(target) else {
            return answer(.notFound, "no such form on this device\n", head: head, context: context)
        }
        answer(.serviceUnavailable, "not yet: this device is fetching it\n", head: head, context: context, extra: [("Retry-After", "1")])
    }
}

import Publishing
import RouteSync

/// `routes --sign-key`: what a run says of the sidecar it signed (G8, docs/signing.md).
extension RoutesCommand {
    static func signedLine(_ signed: ReleaseSigner.Signed, sidecar path: String, manifest: Bool) -> String {
        let signature = signed.signature
        let keys = signed.keyIDs
        var notes = ["version \(signature.version)", "key\(keys.count == 1 ? "" : "s") " + keys.joined(separator: ", ")]
        if signature.signatures.count > 1 { notes.append("\(signature.signatures.count) signatures") }
        if manifest { notes.append("covering the release manifest") }
        if signature.forms != nil { notes.append("covering the release index") }
        if let expires = signature.expires { notes.append("expires \(UTCTime.text(Double(expires)))") }
        if !signature.rotations.isEmpty { notes.append("\(signature.rotations.count) key rotation\(signature.rotations.count == 1 ? "" : "s")") }
        if !signature.isFirstFormat { notes.append("format \(TableSignature.multiFormat): devices before it refuse it") }
        return "signed \(path): " + notes.joined(separator: ", ")
    }
}

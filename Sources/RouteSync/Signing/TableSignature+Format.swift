/// The sidecar's JSON (docs/signing.md). `parse` is a pure function of the bytes (the fuzzers' entry
/// point); `serialized` writes the first format whenever it can say everything, so that devices on
/// older code keep verifying what a newer `routes` writes.
extension TableSignature {
    static let maxEntries = 64

    /// Whether older devices (which know only `cenarius-sig-1`) can read this sidecar.
    package var isFirstFormat: Bool { fitsFirstFormat && signatures.count == 1 && rotations.isEmpty }

    package func serialized() -> [UInt8] {
        if isFirstFormat {
            // The texts of a parsed sidecar are the origin's: quoted, so that it writes back as it read.
            // `table` names the digest the message holds: older devices skip it (unknown keys are
            // ignored), and `routes` can tell a co-signature from a new release by it.
            let table = covers[Self.tableRole].flatMap { $0 == Self.deviceTable ? nil : ", \"table\": \(JSONText.quoted($0))" } ?? ""
            let release = manifest.map { ", \"release\": \(JSONText.quoted($0))" } ?? ""
            return Array("{\"format\": \"\(Self.format)\", \"version\": \(version), \"key\": \(JSONText.quoted(keyID))\(table)\(release), \"signature\": \"\(Base64.encode(signatures[0].signature))\"\(formsJSON)}\n".utf8)
        }
        var fields = ["\"format\": \"\(Self.multiFormat)\"", "\"version\": \(version)"]
        if let signedAt { fields.append("\"signed\": \(signedAt)") }
        if let expires { fields.append("\"expires\": \(expires)") }
        let covered = covers.keys.sorted().map { "\(JSONText.quoted($0)): \(JSONText.quoted(covers[$0]!))" }.joined(separator: ", ")
        fields.append("\"covers\": {\(covered)}")
        let entries = signatures.map { "{\"key\": \(JSONText.quoted($0.keyID)), \"signature\": \"\(Base64.encode($0.signature))\"}" }
        fields.append("\"signatures\": [\(entries.joined(separator: ", "))]")
        if !rotations.isEmpty {
            fields.append("\"rotations\": [\(rotations.map { $0.json }.joined(separator: ", "))]")
        }
        return Array(("{" + fields.joined(separator: ", ") + formsJSON + "}\n").utf8)
    }
}

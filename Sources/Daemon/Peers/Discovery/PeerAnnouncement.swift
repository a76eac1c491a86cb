package import ResourceCache

/// What a device says of itself in its `_cenarius._tcp` TXT records (docs/peers.md): the format,
/// its channel, the release it holds (its table's digest, short, and its head's version), the one
/// its sync is fetching (so that devices installing at once find each other), and an
/// id of this run of the daemon that lets it recognise its own announcement. Never the remote's
/// URL, a header or anything else a device keeps to itself.
package struct PeerAnnouncement: Sendable, Equatable {
    /// `txtvers` (RFC 6763 §6.7): a reader skips a device whose records are of another format.
    package static let format = "1"
    package static let serviceType = "_cenarius._tcp"

    package var channel: String
    /// The first 16 hex digits of the table in force's SHA-256; nil before a first install.
    package var release: String?
    /// The version of the head the release in force came from; nil when none (or no release).
    package var version: Int64?
    /// The first 16 hex digits of the table its sync is fetching now; nil when none.
    package var fetching: String?
    package var instance: String

    package init(channel: String, release: String?, version: Int64?, instance: String, fetching: String? = nil) {
        self.channel = channel
        let held = release.map { String($0.prefix(16)) }
        self.release = held
        self.version = version
        self.fetching = fetching.map { String($0.prefix(16)) }.flatMap { $0 == held ? nil : $0 }
        self.instance = instance
    }

    /// The releases it names, as a sync weighs them (PeerSources.asks).
    package var releases: PeerReleases { PeerReleases(inForce: release, fetching: fetching) }

    /// `rel=`'s value: the release in force, then, after a comma, the one being fetched (`rel=,<fetching>`
    /// before a first install): 33 bytes at most.
    var rel: String? {
        guard release != nil || fetching != nil else { return nil }
        return (release ?? "") + (fetching.map { "," + $0 } ?? "")
    }

    /// `key=value` strings, one a record, each well under DNS's 255 bytes.
    package var txt: [[UInt8]] {
        var records = ["txtvers=" + Self.format, "ch=" + channel, "id=" + instance]
        if let rel { records.append("rel=" + rel) }
        if let version { records.append("v=" + String(version)) }
        return records.map { Array($0.utf8.prefix(255)) }
    }

    /// Another device's records; nil unless they are of this format and name a channel and an id.
    /// What they say is only a hint: every object a peer gives is checked against the signed table.
    package init?(txt: [[UInt8]]) {
        var values: [String: String] = [:]
        for record in txt {
            guard let equals = record.firstIndex(of: UInt8(ascii: "=")) else { continue }
            let key = String(decoding: record[..<equals], as: UTF8.self).lowercased()
            if values[key] == nil { values[key] = String(decoding: record[(equals + 1)...], as: UTF8.self) }
        }
        guard values["txtvers"] == Self.format, let channel = values["ch"], let instance = values["id"], !instance.isEmpty else { return nil }
        let rel = values["rel"].map { $0.split(separator: ",", maxSplits: 1, omittingEmptySubsequences: false) } ?? []
        let named = rel.map { $0.isEmpty ? nil : String($0) }
        self.init(channel: channel, release: named.first ?? nil, version: values["v"].flatMap { Int64($0) }, instance: instance,
                  fetching: named.count > 1 ? named[1] : nil)
    }
}

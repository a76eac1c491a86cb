package import RouteSync
import Transport

/// `publish --public-url URL`: the release as a device meets it, through the CDN or server that
/// fronts the remote. Asks for the head as a device does, and for what it names; says whether
/// the edge already serves the new head and, when it does not, for how long it may go on serving
/// the old one (its `Age` against its `max-age`).
package struct EdgeCheck: Sendable, Encodable {
    package var url: String
    /// The edge serves the head just written, byte for byte.
    package var serving = false
    /// The version of the head the edge served, when it served one that reads.
    package var servedVersion: Int64?
    package var age: Int?
    package var maxAge: Int?
    /// Seconds the edge may still serve what it served (max-age − Age), when it is not the new head.
    package var staleFor: Int?
    /// Objects the new head names, fetched through the edge and found to be what their names say.
    package var objectsChecked = 0
    /// What a device would fail on.
    package var problems: [String] = []

    package static func run(publicURL: String, headKey: String, head: ReleaseHead, headBytes: [UInt8], caFile: String?) -> EdgeCheck {
        var base = publicURL
        while base.hasSuffix("/") { base.removeLast() }
        var check = EdgeCheck(url: base)
        var client = S3Client(address: nil)
        client.caFile = caFile
        client.attempts = 2
        func get(_ key: String, limit: Int) -> S3Response? {
            var answer: S3Response?
            // A device's request: no validators, so the edge answers with what it holds.
            try? client.perform([S3Request(method: "GET", url: base + "/" + key, limit: limit, tag: key)]) { _, response in
                answer = response
            }
            return answer
        }
        guard let served = get(headKey, limit: ReleaseHead.maxBytes), served.status == 200 else {
            check.problems.append("\(base)/\(headKey): no head served")
            return check
        }
        check.age = served.headers["age"].flatMap(HeaderValue.age)
        check.maxAge = served.headers["cache-control"].flatMap(HeaderValue.sharedMaxAge)
        check.servedVersion = (try? ReleaseHead.parse(served.body, source: headKey))?.version
        check.serving = served.body == headBytes
        if !check.serving, let maxAge = check.maxAge { check.staleFor = max(0, maxAge - (check.age ?? 0)) }
        for (key, digest) in head.objects {
            guard let response = get(key, limit: 64 << 20), response.status == 200, ReleaseIndex.tableDigest(response.body) == digest else {
                check.problems.append("\(base)/\(key), which the new head names, is not served as it was written")
                continue
            }
            check.objectsChecked += 1
        }
        return check
    }
}

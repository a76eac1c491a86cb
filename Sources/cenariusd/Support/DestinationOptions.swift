import ArgumentParser
import Publishing
import RouteSync
import Settings

/// How a publisher's command reaches an S3-compatible store: the AWS conventions for credentials
/// and region, and these for what they do not cover.
struct StoreOptions: ParsableArguments {
    @Option(help: ArgumentHelp("S3: the store's URL when it is not AWS (R2, MinIO, Ceph, OpenStack Swift); default AWS_ENDPOINT_URL.", valueName: "url"))
    var endpoint: String?
    @Option(help: ArgumentHelp("S3: the region requests are signed for (default AWS_REGION, the profile's, else us-east-1).", valueName: "region"))
    var region: String?
    @Flag(help: "S3: address objects as ENDPOINT/BUCKET/KEY (automatic for an IP address or a bucket with dots).")
    var pathStyle = false
    @Option(help: ArgumentHelp("S3: requests at once (uploads and deletions of one phase; the head is still written last, alone).", valueName: "n"))
    var jobs = S3Client.defaultConcurrency

    /// DEST: a folder, `file:///PATH` or `s3://BUCKET/PREFIX`.
    func open(_ text: String, cacert: String?) throws(CenariusError) -> any Destination {
        switch try DestinationAddress(text) {
        case .folder(let path):
            return FolderDestination(root: path)
        case .s3(let bucket, let prefix):
            let address = try S3Address(bucket: bucket, prefix: prefix, endpoint: endpoint, region: region, pathStyle: pathStyle,
                                        environment: { ProcessEnvironment()[$0] })
            guard (1...64).contains(jobs) else { throw .usage("--jobs must be 1 to 64") }
            return S3Destination(address: address, caFile: cacert, concurrency: jobs)
        }
    }
}

/// `publish`, `promote`, `releases`, `halt`, `resume` and `prune`: the store's options, its CA and the table's name.
struct DestinationOptions: ParsableArguments {
    @OptionGroup var store: StoreOptions
    @Option(help: ArgumentHelp("S3: trust this CA bundle for the store's TLS certificate.", valueName: "file"))
    var cacert: String?
    @Option(help: ArgumentHelp("File name of the route table.", valueName: "name"))
    var routesName: String = "Routes.json"

    func open(_ text: String) throws(CenariusError) -> any Destination { try store.open(text, cacert: cacert) }
}

/// What the commands that republish a stored release (rollback, promote, halt, resume) take.
struct RepublishOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Ed25519 private key to sign the new head with; repeatable (a signed channel needs it).", valueName: "file"))
    var signKey: [String] = []
    @Option(help: ArgumentHelp("Signature: devices refuse the new head this long after signing (90s, 30m, 12h, 7d).", valueName: "duration"))
    var expires: String?
    @Option(help: ArgumentHelp("Signature: publish a key rotation statement from keygen --rotate-from; repeatable, oldest first (default: the statements the channel's head publishes now).", valueName: "file"))
    var rotation: [String] = []
    @Option(help: ArgumentHelp("Seconds a CDN may serve the head and the Cenarius layout's files before asking again.", valueName: "seconds"))
    var pointerMaxAge = 60
    @Flag(help: "Write an unsigned head over a signed channel on purpose (every device that holds a public key then refuses it).") var unsigned = false
    @Flag(help: "Say what would be uploaded, and upload nothing.") var dryRun = false

    func validate() throws {
        if let expires, DurationText.seconds(expires) == nil { throw ValidationError("--expires must be a duration such as 90s, 30m, 12h or 7d") }
        if signKey.isEmpty, expires != nil || !rotation.isEmpty { throw ValidationError("--expires and --rotation need --sign-key") }
        if unsigned, !signKey.isEmpty { throw ValidationError("--unsigned and --sign-key contradict each other") }
    }

    /// A republish keeps what the channel's head says of its trust — its key rotations and its
    /// signature's lifetime — unless these options say otherwise (`Publication.inheritTrust`).
    var releaseOptions: ReleaseOptions {
        get throws {
            var options = try ReleaseOptions.parse([])
            options.signKey = signKey
            options.expires = expires
            options.rotation = rotation
            options.unsigned = unsigned
            return options
        }
    }
}

@testable import Publishing
import RouteSync
import Transport
import Testing

/// The publisher's pure parts: names, classes, the S3 answers it reads, and the plans it makes.
@Suite struct PublishingTests {
    @Test func s3KeysAndQueriesAreEncodedAsSigV4SignsThem() throws {
        let address = try S3Address(bucket: "assets", prefix: "app/", endpoint: "http://127.0.0.1:9000", region: nil, pathStyle: false,
                                    environment: ["AWS_ACCESS_KEY_ID": "test:tester", "AWS_SECRET_ACCESS_KEY": "s"].get)
        #expect(address.pathStyle, "an IP address has no subdomains")
        #expect(address.region == "us-east-1")
        #expect(address.url("js/a b+c.js") == "http://127.0.0.1:9000/assets/app/js/a%20b%2Bc.js")
        #expect(address.url(nil, query: [("prefix", "app/_cenarius/"), ("list-type", "2")])
            == "http://127.0.0.1:9000/assets?list-type=2&prefix=app%2F_cenarius%2F")
        let aws = try S3Address(bucket: "assets", prefix: "", endpoint: nil, region: "eu-west-1", pathStyle: false,
                                environment: ["AWS_ACCESS_KEY_ID": "k", "AWS_SECRET_ACCESS_KEY": "s"].get)
        #expect(aws.url("index.html") == "https://assets.s3.eu-west-1.amazonaws.com/index.html")
    }

    @Test func credentialsComeFromTheEnvironmentElseTheProfile() throws {
        #expect(throws: CenariusError.self) {
            _ = try S3Address(bucket: "b-1", prefix: "", endpoint: nil, region: nil, pathStyle: false, environment: ["HOME": "/nonexistent"].get)
        }
        let section = S3Credentials.iniSection(Array("[default]\naws_access_key_id = A\n[profile x]\nregion=eu\n[ci]\naws_access_key_id=B\naws_secret_access_key = C\n".utf8), "ci")
        #expect(section == ["aws_access_key_id": "B", "aws_secret_access_key": "C"])
    }

    @Test func destinationsAreFoldersOrBuckets() throws {
        #expect(try DestinationAddress("/srv/www") == .folder("/srv/www"))
        #expect(try DestinationAddress("file:///srv/www") == .folder("/srv/www"))
        #expect(try DestinationAddress("s3://assets/app/v1/") == .s3(bucket: "assets", prefix: "app/v1/"))
        #expect(try DestinationAddress("s3://assets") == .s3(bucket: "assets", prefix: ""))
        for bad in ["https://example.com/www", "s3://A_Bucket/x", "file://relative", ""] {
            #expect(throws: CenariusError.self, "\(bad)") { _ = try DestinationAddress(bad) }
        }
    }

    @Test func aListingIsReadWithItsEntities() {
        let xml = Array("""
            <?xml version="1.0"?><ListBucketResult><IsTruncated>true</IsTruncated><NextContinuationToken>t&amp;1</NextContinuationToken>
            <Contents><Key>app/a&lt;b&#x26;.js</Key><LastModified>2026-11-26T03:10:00.000Z</LastModified><ETag>&quot;d41d8&quot;</ETag><Size>12</Size></Contents>
            <Contents><Key>app/Routes.head</Key><Size>7</Size></Contents></ListBucketResult>
            """.utf8)
        #expect(XMLText.first("NextContinuationToken", in: xml) == "t&1")
        #expect(XMLText.all("Key", in: xml) == ["app/a<b&.js", "app/Routes.head"])
        #expect(XMLText.all("ETag", in: xml) == ["\"d41d8\""])
        #expect(XMLText.time("2026-11-26T03:10:00.000Z") == 1_795_662_600)
        #expect(XMLText.time("yesterday") == nil)
        #expect(S3Response(status: 403, body: Array("<Error><Code>SignatureDoesNotMatch</Code><Message>no</Message></Error>".utf8)).errorText
            == "SignatureDoesNotMatch: no")
    }

    @Test func storeObjectsAreCachedForeverAndPointersBriefly() {
        for key in ["_cenarius/z/0123.zst", "_cenarius/t/ab.json", "_cenarius/r/default/1.json", "_cenarius/f/0123", "_cenarius/index/ab.json"] {
            #expect(ObjectClass(key: key) == .store, "\(key)")
        }
        for key in ["Routes.head", "Routes.json", "Routes.json.sig", "_cenarius/Routes.json.zst", "index.html"] {
            #expect(ObjectClass(key: key) == .pointer, "\(key)")
        }
        #expect(ObjectClass.store.cacheControl(pointerMaxAge: 60) == "public, max-age=31536000, immutable")
        #expect(ObjectClass.pointer.cacheControl(pointerMaxAge: 30) == "public, max-age=30, must-revalidate")
        #expect(ContentType.of("js/app.1a2b.js") == "text/javascript; charset=utf-8")
        #expect(ContentType.of("Routes.beta.head") == "application/json")
        #expect(ContentType.of("_cenarius/f/0123") == "application/octet-stream")
        #expect(ContentType.of(".hidden") == "application/octet-stream")
    }

    @Test func recordsAreNamedByChannelAndVersion() throws {
        #expect(ReleaseRecord.parseKey("_cenarius/r/beta/42.json")! == ("beta", 42))
        #expect(ReleaseRecord.parseKey("_cenarius/r/Beta/42.json") == nil)
        #expect(ReleaseRecord.parseKey("_cenarius/r/beta/x.json") == nil)
        let head = ReleaseHead(channel: "beta", version: 42, table: String(repeating: "a", count: 64), tableSize: 10)
        let record = try ReleaseRecord(head: head.serialized(), published: 1_795_000_000, origin: "publish", files: 3, bytes: 99)
        let read = try ReleaseRecord.parse(record.serialized(), source: "record")
        #expect(read == record && read.key == "_cenarius/r/beta/42.json")
        #expect(throws: CenariusError.self) { _ = try ReleaseRecord.parse(Array("{\"format\": \"other\"}".utf8), source: "x") }
    }

    @Test func pruneDeletesOnlyOldUnnamedObjectsOfTheStoresOwnKinds() {
        let objects: [String: StoredObject] = [
            "_cenarius/z/old.zst": StoredObject(size: 10, modified: 100),
            "_cenarius/z/young.zst": StoredObject(size: 10, modified: 900),
            "_cenarius/z/named.zst": StoredObject(size: 10, modified: 100),
            "_cenarius/other/mine": StoredObject(size: 10, modified: 100),
            "_cenarius/Routes.json.zst": StoredObject(size: 10, modified: 100),
            "index.html": StoredObject(size: 10, modified: 100),
        ]
        let prune = Prune(objects: objects, referenced: ["_cenarius/z/named.zst"], olderThan: 500)
        #expect(prune.deletions == ["_cenarius/z/old.zst"] && prune.bytes == 10)
        #expect(prune.referenced == 1 && prune.protected == 1)
    }

    @Test func maxAgeIsReadAsASharedCacheReadsIt() {
        #expect(HeaderValue.sharedMaxAge("public, max-age=60, must-revalidate") == 60)
        #expect(HeaderValue.sharedMaxAge("max-age=60, s-maxage=5") == 5)
        #expect(HeaderValue.sharedMaxAge("no-store") == nil)
    }
}

extension Dictionary where Key == String, Value == String {
    /// The dictionary as an environment lookup.
    var get: (String) -> String? { { self[$0] } }
}

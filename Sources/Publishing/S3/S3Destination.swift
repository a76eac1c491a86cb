package import RouteSync

/// A remote in an S3-compatible object store (AWS S3, Cloudflare R2, Google Cloud Storage's XML
/// API, MinIO, Ceph, OpenStack Swift): objects under `s3://BUCKET/PREFIX`, written with one PUT
/// each (a store never shows half an object), eight at a time.
package struct S3Destination: Destination {
    package let address: S3Address
    let client: S3Client

    package init(address: S3Address, caFile: String?, concurrency: Int = S3Client.defaultConcurrency) {
        self.address = address
        var client = S3Client(address: address)
        client.caFile = caFile
        client.concurrency = concurrency
        self.client = client
    }

    package var description: String { "s3://\(address.bucket)/\(address.prefix)" }

    package func list(prefix: String) throws(CenariusError) -> [String: StoredObject] {
        var found: [String: StoredObject] = [:]
        var token: String?
        repeat {
            var query = [("list-type", "2"), ("prefix", address.prefix + prefix)]
            if let token { query.append(("continuation-token", token)) }
            let request = S3Request(method: "GET", url: address.url(nil, query: query), limit: 16 << 20, tag: "list \(prefix)")
            var page: [UInt8] = []
            try client.perform([request]) { _, response throws(CenariusError) in
                guard response.status == 200 else { throw failure("cannot list \(description)\(prefix)", response) }
                page = response.body
            }
            let listing = S3Listing(page)
            for (key, object) in listing.objects where key.hasPrefix(address.prefix) && key != address.prefix + LockHolder.key {
                found[String(key.dropFirst(address.prefix.count))] = object
            }
            token = listing.next
        } while token != nil
        return found
    }

    package func read(_ key: String, limit: Int) throws(CenariusError) -> [UInt8]? {
        try read([key], limit: limit)[key]
    }

    package func read(_ keys: [String], limit: Int) throws(CenariusError) -> [String: [UInt8]] {
        var found: [String: [UInt8]] = [:]
        // Concurrent GETs, handed to the client 64 at a time as `write` does. Four times `--jobs` (at
        // most 32): a read is a round trip with a small answer, which a store serves many of at once
        // (`aws s3 sync` runs 10 requests at once, rclone 8 checkers beside its transfers); a one-file
        // release right after a large one reads hundreds of stored forms and patches.
        var reader = client
        reader.concurrency = min(32, client.concurrency * 4)
        for batch in keys.batches() {
            let requests = batch.map { S3Request(method: "GET", url: address.url($0), limit: limit, tag: $0) }
            try reader.perform(requests) { request, response throws(CenariusError) in
                switch response.status {
                case 200: found[request.tag] = response.body
                case 404: break
                default: throw failure("cannot read \(description)\(request.tag)", response)
                }
            }
        }
        return found
    }

    package func write(_ uploads: [Upload], progress: (Upload) -> Void) throws(CenariusError) {
        // In batches, so that no more than a batch's bodies are in memory at once.
        var byKey: [String: Upload] = [:]
        for upload in uploads { byKey[upload.key] = upload }
        for slice in uploads.batches(size: \.sent) {
            var batch: [S3Request] = []
            for upload in slice {
                var headers = ["Content-Type: \(upload.contentType)", "Cache-Control: \(upload.cacheControl)"]
                var body: [UInt8] = []
                if case .copy(let source) = upload.body {
                    // The headers given here, not the source's: a layout file is not immutable as the store's objects are.
                    headers += ["x-amz-copy-source: /\(address.bucket)/" + S3Address.encode(address.prefix + source, keepSlashes: true),
                                "x-amz-metadata-directive: REPLACE"]
                } else {
                    body = try upload.bytes()
                }
                batch.append(S3Request(method: "PUT", url: address.url(upload.key), headers: headers, body: body, limit: 64 << 10, tag: upload.key))
            }
            try client.perform(batch) { request, response throws(CenariusError) in
                // A copy can fail after its 200 has been sent: its body then holds an <Error>.
                guard response.status == 200, XMLText.blocks("Error", in: response.body[...]).isEmpty else { throw failure("cannot write \(description)\(request.tag)", response) }
                if let upload = byKey[request.tag] { progress(upload) }
            }
        }
    }

    package func delete(_ keys: [String], progress: (String) -> Void) throws(CenariusError) {
        let requests = keys.map { S3Request(method: "DELETE", url: address.url($0), limit: 64 << 10, tag: $0) }
        try client.perform(requests) { request, response throws(CenariusError) in
            guard response.status == 204 || response.status == 200 || response.status == 404 else {
                throw failure("cannot delete \(description)\(request.tag)", response)
            }
            progress(request.tag)
        }
    }

    func failure(_ what: String, _ response: S3Response) -> CenariusError {
        let text = "\(what): \(response.errorText)"
        // Credentials, a missing bucket, a policy: the publisher's to fix; anything else the store's.
        switch response.status {
        case 400, 403, 404: return .usage(text)
        default: return .remote(text)
        }
    }
}

import RouteSync
/// Hashes the bodies HashCheck's workers hold in memory. MD5 bodies go through vector lanes
/// that keep a long body from one round to the next (MD5Lanes): a round then ends without
/// waiting for its longest bodies, which stay here, holding their memory, until a later round
/// (or the final one, with `finish`) completes them.
final class BodyHasher<Item> {
    /// nil without AVX2: bodies are then hashed one at a time.
    private let lanes = MD5Lanes()
    private var held: [Int: (item: Item, body: BodyBuffer)] = [:]
    private var heldBytes = 0
    private var nextTag = 0
    /// Past this many bytes held, a round finishes every body. Lanes only move while they are
    /// full, so without it bodies could wait through rounds that bring few new ones (files the
    /// loop wrote itself, another algorithm), keeping their memory and the budget it counts
    /// against, which would send yet more bodies down the loop's slower path.
    let holdLimit: Int

    init(holdLimit: Int) {
        self.holdLimit = holdLimit
    }

    /// Bodies started in an earlier round and not finished.
    var holding: Int { held.count }

    /// The bodies finished now, with their hash and size: all of `bodies` and of those held
    /// when `finish` (or when more than `holdLimit` bytes would be held); otherwise some may be
    /// held for the next call.
    func hash(_ bodies: [(item: Item, body: BodyBuffer, algorithm: ContentHash.Algorithm)],
              finish: Bool) -> [(item: Item, hash: ContentHash, size: Int64)] {
        var done: [(item: Item, hash: ContentHash, size: Int64)] = []
        var messages: [(tag: Int, bytes: UnsafeRawBufferPointer)] = []
        for (item, body, algorithm) in bodies {
            guard algorithm == .md5, lanes != nil else {
                var hasher = StreamingHasher(algorithm)
                hasher.update(body.bytes)
                done.append((item, hasher.finalize(), Int64(body.count)))
                continue
            }
            held[nextTag] = (item, body)
            heldBytes += body.count
            messages.append((nextTag, body.bytes))
            nextTag += 1
        }
        let finish = finish || heldBytes > holdLimit
        guard let lanes, !messages.isEmpty || (finish && !held.isEmpty) else { return done }
        for (tag, digest) in lanes.run(messages, finish: finish) {
            let (item, body) = held.removeValue(forKey: tag)!
            heldBytes -= body.count
            done.append((item, digest, Int64(body.count)))
        }
        return done
    }
}

import Dispatch
import RouteSync
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Decodes a pack's frames (B8) into the files they give, on a thread of its own while the pack
/// is still downloading: the frames before the last are decoded, hashed and written while the
/// link brings the rest, which on a slow link is most of the decoding's time (GrowingFile).
struct PackUnpacking: Sendable {
    struct Unpacked: Sendable {
        var size: Int64
        var patched: Bool
    }

    struct Reason: Error {
        var reason: String
    }

    typealias Results = [Int: Result<Unpacked, Reason>]

    private final class Box: Sendable {
        let results = Mutex<Results>([:])
    }

    private let file: GrowingFile
    private let box = Box()
    private let group = DispatchGroup()

    /// Starts decoding `file`, keeping the frames `members` (frame → product index) asks for.
    init(_ unpacker: Unpacker, file: GrowingFile, plan: FormPlan, members: [Int: Int], products: [FormFetcher.Product]) {
        self.file = file
        let box = box
        DispatchQueue(label: "cenariusd.unpack").async(group: group) {
            let results = unpacker.unpack(file, plan: plan, members: members, products: products)
            box.results.withLock { $0 = results }
        }
    }

    /// The download is over (done, failed or cancelled): one result per member, once the frames
    /// still in the file are decoded.
    func finish() -> Results {
        file.finish()
        group.wait()
        return box.results.withLock { $0 }
    }
}

/// What decoding a pack needs from FormFetcher, all of it Sendable.
struct Unpacker: Sendable {
    var temporary: String
    var maxFileSize: Int64
    var basePath: @Sendable (ContentHash) -> String?

    /// The most a product's output may be: the entry's size when the table gives one, and never
    /// above --max-file-size.
    func limit(_ size: Int64?) -> Int64 { min(size ?? maxFileSize, maxFileSize) }

    /// Decodes the pack's frames one after another (each frame's end is where the next starts),
    /// keeping those `members` (frame → product) asks for. A frame that fails leaves it and every
    /// frame after it to their next source. One result per member.
    func unpack(_ file: GrowingFile, plan: FormPlan, members: [Int: Int], products: [FormFetcher.Product]) -> PackUnpacking.Results {
        if plan.solid { return unpackSolid(file, plan: plan, members: members, products: products) }
        let scratch = temporary + "/skipped-frame"
        defer { unlink(scratch) }
        var results: PackUnpacking.Results = [:]
        func failAll(from ordinal: Int, _ why: String) {
            for (later, i) in members where later >= ordinal { results[i] = .failure(.init(reason: "pack frame \(later): \(why)")) }
        }
        var offset: Int64 = 0
        let last = members.keys.max() ?? -1
        for (ordinal, (entry, base)) in plan.packFrames.enumerated() where ordinal <= last {
            let product = members[ordinal].map { products[$0] }
            var held: String?
            if let base {
                held = basePath(base)
                guard held != nil else {
                    failAll(from: ordinal, "patch base \(base) is gone")
                    return results
                }
            }
            let decoding = FormDecoding(source: file.path, offset: offset, framesFollow: true, base: held,
                                        limit: limit(product?.size ?? entry.size), expected: entry.hash, growing: file)
            do {
                let (size, end) = try decoding.decodeFrame(to: product?.destination ?? scratch)
                offset = end
                if let i = members[ordinal] { results[i] = .success(.init(size: size, patched: base != nil)) }
            } catch {
                failAll(from: ordinal, error.description)
                return results
            }
        }
        return results
    }

    /// A solid pack: one stream, cut into its files in order; the files not asked for are checked
    /// and dropped. A failure leaves its file and every one after it to their next source.
    private func unpackSolid(_ file: GrowingFile, plan: FormPlan, members: [Int: Int], products: [FormFetcher.Product]) -> PackUnpacking.Results {
        let wanted = plan.packFrames.enumerated().map { ordinal, frame in
            let product = members[ordinal].map { products[$0] }
            return SolidPack.Member(expected: frame.entry.hash, limit: limit(product?.size ?? frame.entry.size), destination: product?.destination)
        }
        var results: PackUnpacking.Results = [:]
        for (ordinal, result) in SolidPack.decode(file.path, growing: file, members: wanted).enumerated() {
            guard let i = members[ordinal] else { continue }
            switch result {
            case .success(let size): results[i] = .success(.init(size: size, patched: false))
            case .failure(let why): results[i] = .failure(.init(reason: "solid pack file \(ordinal): \(why.description)"))
            }
        }
        return results
    }
}

#if canImport(Glibc)
import Glibc
#endif

/// Hashes many files at once. MD5 is one serial dependency chain per message, so one file
/// cannot be hashed faster than about 600 MB/s per core; with AVX2, eight files go through
/// the vector unit side by side (CMultiMD5), sixteen with AVX-512, at several times that in
/// total. Other algorithms, CPUs without AVX2, lone files and large files take the streaming path.
///
/// Files are read into one reused buffer rather than mapped: a mapping costs an unmap with a
/// TLB shootdown per file, and a file truncated under a mapping would be a SIGBUS.
package final class BatchHasher {
    /// Larger files stream; at most `bufferBytes` of file contents are held at once.
    package static let maxBufferedFile = 1 << 20
    package static let bufferBytes = 4 << 20

    private var buffer: UnsafeMutableRawBufferPointer?
    private var used = 0
    private var jobs: [(index: Int, offset: Int, size: Int)] = []
    /// nil without AVX2: every file then streams.
    private let lanes = MD5Lanes()

    package init() {}

    deinit { buffer?.deallocate() }

    /// One result per path, in order: the hash and size of what the file holds now, or nil
    /// when it cannot be read.
    package func hash(_ paths: [String], algorithm: ContentHash.Algorithm) -> [(ContentHash, Int64)?] {
        guard algorithm == .md5, lanes != nil, paths.count > 1 else {
            return paths.map { try? FileSystem.hashFile($0, algorithm: algorithm) }
        }
        var results = [(ContentHash, Int64)?](repeating: nil, count: paths.count)
        for (index, path) in paths.enumerated() where !buffer(path, as: index, results: &results) {
            results[index] = try? FileSystem.hashFile(path, algorithm: algorithm)
        }
        finish(into: &results)
        return results
    }

    /// The buffer, with room for `count` more bytes (hashing what it holds first if need be).
    private func reserve(_ count: Int, results: inout [(ContentHash, Int64)?]) -> UnsafeMutableRawBufferPointer {
        if used + count > Self.bufferBytes { finish(into: &results) }
        let storage = buffer ?? .allocate(byteCount: Self.bufferBytes, alignment: 64)
        buffer = storage
        return storage
    }

    /// Every file hashed, in order, each with its own algorithm (the buffer bounds the memory
    /// however many there are); nil for a file that cannot be read.
    package func hashEach(_ files: [(path: String, algorithm: ContentHash.Algorithm)]) -> [(ContentHash, Int64)?] {
        var results = [(ContentHash, Int64)?](repeating: nil, count: files.count)
        for algorithm in ContentHash.Algorithm.allCases {
            let indices = files.indices.filter { files[$0].algorithm == algorithm }
            for (index, result) in zip(indices, hash(indices.map { files[$0].path }, algorithm: algorithm)) {
                results[index] = result
            }
        }
        return results
    }

    /// `hashEach`, where a file that cannot be read throws the error a direct read gives.
    package func hashAll(_ files: [(path: String, algorithm: ContentHash.Algorithm)]) throws(CenariusError) -> [(ContentHash, Int64)] {
        var hashed: [(ContentHash, Int64)] = []
        hashed.reserveCapacity(files.count)
        for (file, result) in zip(files, hashEach(files)) {
            if let result {
                hashed.append(result)
            } else {
                hashed.append(try FileSystem.hashFile(file.path, algorithm: file.algorithm))
            }
        }
        return hashed
    }

    /// Reads a small file into the buffer; false when it should stream (too large, or it grew
    /// while being read). Unreadable files are left nil.
    private func buffer(_ path: String, as index: Int, results: inout [(ContentHash, Int64)?]) -> Bool {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { return true }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return true }
        let size = Int(info.st_size)
        guard size <= Self.maxBufferedFile else { return false }
        let storage = reserve(size + 1, results: &results)
        // One byte more than fstat said, to notice a file that is still growing.
        var got = 0
        while got < size + 1 {
            let n = read(fd, storage.baseAddress! + used + got, size + 1 - got)
            if n < 0 && errno == EINTR { continue }
            if n < 0 { return true }
            if n == 0 { break }
            got += n
        }
        guard got <= size else { return false }
        record(index, size: got)
        return true
    }

    /// The `size` bytes just placed at `used` belong to input `index`.
    private func record(_ index: Int, size: Int) {
        jobs.append((index, used, size))
        used += size
    }

    /// Hashes what is buffered and empties the buffer.
    private func finish(into results: inout [(ContentHash, Int64)?]) {
        guard let base = buffer?.baseAddress, let lanes, !jobs.isEmpty else { return }
        let messages = jobs.indices.map { (tag: $0, bytes: UnsafeRawBufferPointer(start: base + jobs[$0].offset, count: jobs[$0].size)) }
        for (tag, digest) in lanes.run(messages, finish: true) { results[jobs[tag].index] = (digest, Int64(jobs[tag].size)) }
        jobs.removeAll(keepingCapacity: true)
        used = 0
    }
}

#if canImport(Glibc)
import Glibc
#endif
import CPlatform
import RouteSync

/// One access log, plain or gzip (one member or several, as rotated logs are): plain files are read
/// with read(2) straight into the chunk's buffer, gzip through zlib, which inflates into it too.
struct LogFile: ~Copyable {
    let path: String
    /// The file's size on disk, and how far reading has got in it (compressed bytes for gzip).
    let size: Int
    /// A regular file (not a pipe): it can be read from its start again.
    let isRegular: Bool
    private(set) var position = 0
    private let fd: Int32
    private let gzip: UnsafeMutableRawPointer?

    init(_ path: String) throws(CenariusError) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw FileSystem.failure("cannot read", path) }
        var info = stat()
        let known = fstat(fd, &info) == 0
        let size = known ? Int(info.st_size) : 0
        let isRegular = known && (info.st_mode & S_IFMT) == S_IFREG
        var magic: (UInt8, UInt8) = (0, 0)
        // A pipe cannot be peeked at: zlib tells gzip from plain bytes itself there (it reads either).
        let head = isRegular ? withUnsafeMutableBytes(of: &magic) { pread(fd, $0.baseAddress, 2, 0) } : 0
        var gzip: UnsafeMutableRawPointer?
        if !isRegular || (head == 2 && magic == (0x1F, 0x8B)) {
            // On the descriptor already open: a pipe opened a second time waits for a writer that is gone.
            gzip = cplatform_gzdopen(fd)
            if gzip == nil {
                let code = errno
                close(fd)
                throw FileSystem.failure("cannot read", path, code)
            }
        }
        self.path = path
        self.fd = fd
        self.size = size
        self.isRegular = isRegular
        self.gzip = gzip
    }

    /// The format of the log at `path`, from its first 64 KiB (inflated, for gzip).
    static func format(of path: String) throws(CenariusError) -> LogFormat {
        var file = try LogFile(path)
        let head = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 << 10, alignment: 8)
        defer { head.deallocate() }
        var filled = 0
        while filled < head.count {
            let got = try file.read(into: head.baseAddress! + filled, count: head.count - filled)
            if got == 0 { break }
            filled += got
        }
        return LogFormat.detect(UnsafeRawBufferPointer(start: head.baseAddress, count: filled))
    }

    deinit {
        if let gzip { cplatform_gzclose(gzip) }
        close(fd)
    }

    /// Up to `count` bytes into `buffer`; 0 at the end.
    mutating func read(into buffer: UnsafeMutableRawPointer, count: Int) throws(CenariusError) -> Int {
        if let gzip {
            let got = Int(cplatform_gzread(gzip, buffer, UInt32(min(count, Int(Int32.max)))))
            guard got >= 0 else { throw .storage("cannot read \(path): \(String(cString: cplatform_gzerror(gzip)))") }
            position = Int(cplatform_gzoffset(gzip))
            return got
        }
        while true {
            let got = Glibc.read(fd, buffer, count)
            if got < 0 && errno == EINTR { continue }
            guard got >= 0 else { throw FileSystem.failure("cannot read", path) }
            position += got
            return got
        }
    }
}

import CZstd

/// zstd through the run-time loaded libzstd (czstd.h): one-shot compression for publishers, and
/// a streaming decoder whose memory is bounded by the window the caller allows.
package enum Zstd {
    /// The level of every form `routes --compress` writes (zstd -19).
    package static let level: Int32 = 19

    static func load() throws(CenariusError) {
        guard czstd_load() != 0 else { throw .internal(String(cString: czstd_load_error())) }
    }

    /// The smallest window log whose window holds `bytes` (zstd's own bounds, 10...30).
    package static func windowLog(covering bytes: Int64) -> Int32 {
        var log: Int32 = 10
        while log < 30 && (Int64(1) << log) < bytes { log += 1 }
        return log
    }

    /// `source` compressed at `level`; with a `prefix` (a patch's base: `zstd --patch-from`) the
    /// window covers base and source and long-distance matching finds moved blocks.
    package static func compress(_ source: UnsafeRawBufferPointer, prefix: UnsafeRawBufferPointer? = nil, level: Int32 = level) throws(CenariusError) -> [UInt8] {
        try load()
        let capacity = czstd_bound(source.count)
        var error: UnsafePointer<CChar>?
        var written = 0
        let output = [UInt8](unsafeUninitializedCapacity: capacity) { buffer, count in
            if let prefix {
                let window = windowLog(covering: Int64(prefix.count + source.count))
                written = czstd_compress(buffer.baseAddress, capacity, source.baseAddress, source.count,
                                         prefix.baseAddress, prefix.count, level, window, 1, &error)
            } else {
                written = czstd_compress(buffer.baseAddress, capacity, source.baseAddress, source.count, nil, 0, level, 0, 0, &error)
            }
            count = written
        }
        guard written > 0 else { throw .internal("zstd compression failed: \(error.map { String(cString: $0) } ?? "unknown")") }
        return output
    }

    /// `bytes` as one frame with this window and long-distance matching (a solid pack: `zstd -19 --long=W`).
    package static func compress(_ bytes: [UInt8], windowLog: Int32, long: Bool, level: Int32 = level) throws(CenariusError) -> [UInt8] {
        try load()
        let capacity = czstd_bound(bytes.count)
        var error: UnsafePointer<CChar>?
        var written = 0
        let output = bytes.withUnsafeBytes { source in
            [UInt8](unsafeUninitializedCapacity: capacity) { buffer, count in
                written = czstd_compress(buffer.baseAddress, capacity, source.baseAddress, source.count, nil, 0, level, windowLog, long ? 1 : 0, &error)
                count = written
            }
        }
        guard written > 0 else { throw .internal("zstd compression failed: \(error.map { String(cString: $0) } ?? "unknown")") }
        return output
    }

    package static func compress(_ bytes: [UInt8], prefix: [UInt8]? = nil, level: Int32 = level) throws(CenariusError) -> [UInt8] {
        let result: Result<[UInt8], CenariusError> = bytes.withUnsafeBytes { source in
            guard let prefix else { return Result { () throws(CenariusError) in try compress(source, level: level) } }
            return prefix.withUnsafeBytes { base in Result { () throws(CenariusError) in try compress(source, prefix: base, level: level) } }
        }
        return try result.get()
    }
}

extension Zstd {
    /// Whether libzstd can be loaded (a device without it fetches plain files).
    package static var isAvailable: Bool { czstd_load() != 0 }

    /// One frame decoded in memory (a compressed table), never growing past `limit` bytes; with a
    /// `prefix`, a frame made `--patch-from` those bytes (a table patch).
    package static func decompress(_ bytes: [UInt8], prefix: [UInt8]? = nil, limit: Int) throws(FormFailure) -> [UInt8] {
        let decoded: Result<([UInt8], Int), FormFailure>
        if let prefix {
            decoded = prefix.withUnsafeBytes { base in
                Result { () throws(FormFailure) in try decompressFrame(bytes[...], prefix: base, limit: limit) }
            }
        } else {
            decoded = Result { () throws(FormFailure) in try decompressFrame(bytes[...], limit: limit) }
        }
        let (out, end) = try decoded.get()
        guard end == bytes.count else { throw .truncated }
        return out
    }

    /// The frames of `bytes` decoded one after another, each within `limit`.
    package static func decompressFrames(_ bytes: [UInt8], limit: Int) throws(FormFailure) -> [[UInt8]] {
        var frames: [[UInt8]] = []
        var start = 0
        while start < bytes.count {
            let (frame, end) = try decompressFrame(bytes[start...], limit: limit)
            frames.append(frame)
            start = end
        }
        return frames
    }

    /// The frame at the start of `bytes`, and the index just past it.
    static func decompressFrame(_ bytes: ArraySlice<UInt8>, prefix: UnsafeRawBufferPointer? = nil, limit: Int) throws(FormFailure) -> ([UInt8], Int) {
        let decoder: ZstdDecoder
        // A patch's window covers its base and its output.
        let window = windowLog(covering: Int64(limit) + Int64(prefix?.count ?? 0))
        do { decoder = try ZstdDecoder(windowLogMax: window, prefix: prefix) } catch { throw .local(error.message) }
        var out: [UInt8] = []
        let chunk = 64 << 10
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunk, alignment: 16)
        defer { buffer.deallocate() }
        var inPos = 0
        var finished = false
        let failure: FormFailure? = bytes.withUnsafeBytes { input in
            do throws(FormFailure) {
                while !finished {
                    var outPos = 0
                    let before = inPos
                    finished = try decoder.decode(input, &inPos, into: buffer, &outPos)
                    guard out.count + outPos <= limit else { throw .overrun(limit: Int64(limit)) }
                    out.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[0..<outPos]))
                    if !finished && inPos == before && outPos == 0 { throw .truncated }
                }
                return nil
            } catch {
                return error
            }
        }
        if let failure { throw failure }
        return (out, bytes.startIndex + inPos)
    }
}

/// A streaming zstd decoder (one frame). Its memory is the window the frame declares, refused
/// above `2^windowLogMax`, plus the base of a patch, which the caller keeps mapped meanwhile.
final class ZstdDecoder {
    private let decoder: OpaquePointer

    init(windowLogMax: Int32, prefix: UnsafeRawBufferPointer?) throws(CenariusError) {
        try Zstd.load()
        var error: UnsafePointer<CChar>?
        guard let decoder = czstd_decoder_new(windowLogMax, prefix?.baseAddress, prefix?.count ?? 0, &error) else {
            throw .internal("cannot start a zstd decoder: \(error.map { String(cString: $0) } ?? "unknown")")
        }
        self.decoder = decoder
    }

    deinit { czstd_decoder_free(decoder) }

    /// Decodes what it can of `input` from `inputPosition` into `output` from `outputPosition`.
    /// Returns true once the frame is complete.
    func decode(_ input: UnsafeRawBufferPointer, _ inputPosition: inout Int, into output: UnsafeMutableRawBufferPointer,
                _ outputPosition: inout Int) throws(FormFailure) -> Bool {
        var error: UnsafePointer<CChar>?
        var inPos = inputPosition, outPos = outputPosition
        let status = czstd_decode(decoder, output.baseAddress, output.count, &outPos, input.baseAddress, input.count, &inPos, &error)
        inputPosition = inPos
        outputPosition = outPos
        guard status >= 0 else { throw .corrupt("zstd: \(error.map { String(cString: $0) } ?? "unknown")") }
        return status == 0
    }
}

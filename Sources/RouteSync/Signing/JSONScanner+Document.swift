extension JSONScanner {
    /// Scans `bytes` as one JSON document with `body`, then nothing but whitespace: the shape every
    /// signing file (sidecar, rotation statement, trust state) is read with. The failure, if any.
    static func scanDocument(_ bytes: [UInt8], _ body: (inout JSONScanner) throws(Failure) -> Void) -> Failure? {
        bytes.withUnsafeBufferPointer { buffer in
            var scanner = JSONScanner(buffer)
            do throws(Failure) {
                try body(&scanner)
                scanner.skipWhitespace()
                if !scanner.atEnd { throw scanner.fail("trailing data") }
                return nil
            } catch {
                return error
            }
        }
    }
}

/// Why a compressed form, a patch or a pack member could not give a file. Every one of them moves
/// the file on to its next form at once (FormPolicy); none is worth retrying the same form.
package enum FormFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// Not a valid zstd frame, a window above the decoder's bound, or a patch against another base.
    case corrupt(String)
    /// The frame ended before its content did, or trailing bytes followed it.
    case truncated
    /// More output than the product allows (the entry's size or `--max-file-size`): a bomb, or a lie.
    case overrun(limit: Int64)
    /// Decoded, but not to the table's hash (G1).
    case wrongHash(expected: ContentHash, actual: ContentHash)
    /// The local side failed (cannot read the form or the base, cannot write the output).
    case local(String)

    package var description: String {
        switch self {
        case .corrupt(let reason): "corrupt form (\(reason))"
        case .truncated: "truncated form"
        case .overrun(let limit): "form decodes to more than \(limit) bytes"
        case .wrongHash(let expected, let actual): "form decodes to hash \(actual), expected \(expected)"
        case .local(let reason): reason
        }
    }
}

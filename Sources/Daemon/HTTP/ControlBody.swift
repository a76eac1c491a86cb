package import RouteSync

/// A control API request body (`/_cenarius/hold`, `/_cenarius/ready`), read with the project's
/// own JSON scanner and checked field by field (G5): a field of the wrong type or out of range
/// is a 400 that names it, never a trap and never a guess.
package struct ControlBody: Sendable {
    /// Longer bodies are refused before they are parsed.
    package static let maxBytes = 16 << 10

    private let json: JSONValue
    private let example: String

    /// `example` shows the body's shape in the message for one that is not a JSON object.
    package init(_ bytes: [UInt8]?, example: String) throws(CenariusError) {
        self.example = example
        guard let bytes, !bytes.isEmpty else { throw .usage("the body must be \(example)") }
        guard bytes.count <= Self.maxBytes else { throw .usage("the body is longer than \(Self.maxBytes) bytes; it must be \(example)") }
        let parsed: JSONValue
        do { parsed = try JSONValue.parse(bytes, source: "the request body") } catch { throw .usage("\(error.message); it must be \(example)") }
        guard case .object = parsed else { throw .usage("the body must be a JSON object: \(example)") }
        json = parsed
    }

    /// A number of seconds in `range`.
    package func seconds(_ key: String, in range: ClosedRange<Double>) throws(CenariusError) -> Seconds {
        let number = try self.number(key)
        guard range.contains(number), let seconds = Seconds(exactly: number) else {
            throw .usage("\"\(key)\" \(Whole.text(number)) is out of range: it must be \(Whole.text(range.lowerBound)) to \(Whole.text(range.upperBound)) seconds")
        }
        return seconds
    }

    /// A whole number in `range`.
    package func whole(_ key: String, in range: ClosedRange<Int>) throws(CenariusError) -> Int {
        let number = try self.number(key)
        guard let value = Int(exactly: number), range.contains(value) else {
            throw .usage("\"\(key)\" \(Whole.text(number)) is not a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return value
    }

    /// An optional string of at most `maxBytes`.
    package func string(_ key: String, maxBytes: Int) throws(CenariusError) -> String? {
        guard let value = json[key], value != .null else { return nil }
        guard let text = value.string else { throw .usage("\"\(key)\" must be a string, not \(value.kind)") }
        guard text.utf8.count <= maxBytes else { throw .usage("\"\(key)\" is longer than \(maxBytes) bytes") }
        return text
    }

    /// An optional true or false.
    package func flag(_ key: String) throws(CenariusError) -> Bool? {
        guard let value = json[key], value != .null else { return nil }
        guard case .bool(let flag) = value else { throw .usage("\"\(key)\" must be true or false, not \(value.kind)") }
        return flag
    }

    private func number(_ key: String) throws(CenariusError) -> Double {
        guard let value = json[key], value != .null else { throw .usage("\"\(key)\" is missing: the body must be \(example)") }
        guard case .number(let text) = value else { throw .usage("\"\(key)\" must be a number, not \(value.kind)") }
        guard let number = Double(text), number.isFinite else { throw .usage("\"\(key)\" \(text.prefix(40)) is not a finite number") }
        return number
    }
}

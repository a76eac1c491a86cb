/// A small JSON tree for the cache's own bookkeeping files, read with the same scanner as route
/// tables: Foundation's JSONDecoder costs a millisecond or more to warm up in a short-lived process.
package enum JSONValue: Sendable, Equatable {
    case string(String)
    /// The number's text, converted on access.
    case number(String)
    case bool(Bool)
    case null
    case array([JSONValue])
    case object([String: JSONValue])

    package static func parse(_ bytes: [UInt8], source: String) throws(CenariusError) -> JSONValue {
        let result: Result<JSONValue, JSONScanner.Failure> = bytes.withUnsafeBufferPointer { buffer in
            var scanner = JSONScanner(buffer)
            do throws(JSONScanner.Failure) {
                let value = try scanner.value()
                scanner.skipWhitespace()
                if !scanner.atEnd { throw scanner.fail("trailing data") }
                return .success(value)
            } catch {
                return .failure(error)
            }
        }
        switch result {
        case .success(let value): return value
        case .failure(let failure): throw .integrity("invalid JSON in \(source): \(failure.reason) at byte \(failure.offset)")
        }
    }

    package subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    package var string: String? { if case .string(let s) = self { return s } else { return nil } }
    /// nil for a number past Double's range ("1e400" would read as +infinity).
    package var double: Double? { if case .number(let n) = self, let d = Double(n), d.isFinite { return d } else { return nil } }
    package var int64: Int64? { if case .number(let n) = self { return Int64(n) } else { return nil } }

    /// What a message calls a value of the wrong type.
    package var kind: String {
        switch self {
        case .string: "a string"
        case .number: "a number"
        case .bool: "true or false"
        case .null: "null"
        case .array: "an array"
        case .object: "an object"
        }
    }
}

extension JSONScanner {
    mutating func value() throws(Failure) -> JSONValue {
        guard let next = peek() else { throw fail("unexpected end") }
        switch next {
        case UInt8(ascii: "{"):
            var members: [String: JSONValue] = [:]
            try object { s, key throws(Failure) in members[key] = try s.value() }
            return .object(members)
        case UInt8(ascii: "["):
            var items: [JSONValue] = []
            try array { s throws(Failure) in items.append(try s.value()) }
            return .array(items)
        case UInt8(ascii: "\""):
            return .string(try string())
        default:
            let start = offset
            try skipValue()
            let text = rawText(from: start)
            switch text {
            case "true": return .bool(true)
            case "false": return .bool(false)
            case "null": return .null
            default: return .number(text)
            }
        }
    }
}

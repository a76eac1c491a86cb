/// The daemon's Prometheus exposition read back into metric families, so that OTLP metrics are
/// the same figures `GET /metrics` shows, from the same registry: no second list of metrics to
/// keep in step. Only what swift-prometheus writes is read (`# TYPE` lines, `name{k="v"} value`);
/// anything else is skipped.
struct MetricFamily: Sendable {
    enum Kind: Sendable { case counter, gauge, histogram }

    struct Point: Sendable {
        var labels: [(key: String, value: String)]
        /// A counter's or gauge's value as written (an integer stays exact); a histogram's is unused.
        var value = ""
        /// A histogram's upper bounds and the cumulative count at each (Prometheus's `le` buckets).
        var bounds: [Double] = []
        var cumulative: [UInt64] = []
        var sum = 0.0
        var count: UInt64 = 0
    }

    var name: String
    var kind: Kind
    var points: [Point] = []

    static func parse(_ text: [UInt8]) -> [MetricFamily] {
        var families: [MetricFamily] = []
        for line in text.split(separator: UInt8(ascii: "\n")) {
            let line = String(decoding: line, as: UTF8.self)[...]
            if line.hasPrefix("# TYPE ") {
                let words = line.dropFirst(7).split(separator: " ")
                guard words.count == 2 else { continue }
                let kind: Kind? = switch words[1] {
                case "counter": .counter
                case "gauge": .gauge
                case "histogram": .histogram
                default: nil
                }
                if let kind { families.append(MetricFamily(name: String(words[0]), kind: kind)) }
            } else if !line.hasPrefix("#"), let sample = Sample(line), !families.isEmpty {
                families[families.count - 1].add(sample)
            }
        }
        return families.filter { !$0.points.isEmpty }
    }

    private mutating func add(_ sample: Sample) {
        guard sample.name.hasPrefix(name) else { return }
        let suffix = sample.name.dropFirst(name.count)
        guard kind == .histogram else {
            if suffix.isEmpty { points.append(Point(labels: sample.labels, value: sample.value)) }
            return
        }
        let labels = sample.labels.filter { $0.key != "le" }
        let index = points.firstIndex { $0.labels.map(\.key) == labels.map(\.key) && $0.labels.map(\.value) == labels.map(\.value) }
            ?? { points.append(Point(labels: labels)); return points.count - 1 }()
        switch suffix {
        case "_bucket":
            // +Inf is the count, which `_count` gives too; the bounds are the finite ones.
            guard let bound = sample.labels.first(where: { $0.key == "le" }).flatMap({ Double($0.value) }), bound.isFinite,
                  let count = UInt64(sample.value) else { return }
            points[index].bounds.append(bound)
            points[index].cumulative.append(count)
        case "_sum": points[index].sum = Double(sample.value) ?? 0
        case "_count": points[index].count = UInt64(sample.value) ?? 0
        default: break
        }
    }

    /// One sample line: `name{key="value",…} value`.
    private struct Sample {
        var name: Substring
        var labels: [(key: String, value: String)] = []
        var value: String

        init?(_ line: Substring) {
            guard let end = line.firstIndex(where: { $0 == "{" || $0 == " " }) else { return nil }
            name = line[..<end]
            var rest = line[end...]
            if rest.first == "{" {
                rest = rest.dropFirst()
                while let equals = rest.firstIndex(of: "="), rest[rest.index(after: equals)...].first == "\"" {
                    let key = rest[..<equals].drop { $0 == "," }
                    var text = ""
                    var escaped = false
                    var index = rest.index(equals, offsetBy: 2)
                    while index < rest.endIndex {
                        let character = rest[index]
                        index = rest.index(after: index)
                        if escaped {
                            text.append(character == "n" ? "\n" : character)
                            escaped = false
                        } else if character == "\\" {
                            escaped = true
                        } else if character == "\"" {
                            break
                        } else {
                            text.append(character)
                        }
                    }
                    labels.append((String(key), text))
                    rest = rest[index...]
                }
                guard let close = rest.firstIndex(of: "}") else { return nil }
                rest = rest[rest.index(after: close)...]
            }
            value = String(rest.drop { $0 == " " })
            guard !value.isEmpty else { return nil }
        }
    }
}


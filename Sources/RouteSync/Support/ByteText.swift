/// A byte count for people: `812 B`, `4.6 MiB`. For messages, `status` and progress.
package enum ByteText {
    package static func text(_ count: Int64) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(count)
        var unit = 0
        while value >= 1024 && unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        let tenths = Whole.clamped(value * 10)
        return unit == 0 ? "\(count) B" : "\(tenths / 10).\(tenths % 10) \(units[unit])"
    }
}

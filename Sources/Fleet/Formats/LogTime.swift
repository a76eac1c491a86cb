/// The times CDN logs write, as unix seconds (UTC), read without Foundation's date formatters.
enum LogTime {
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// S3's `[06/Feb/2019:00:00:38 +0000]` (the offset applied).
    static func s3(_ text: ArraySlice<UInt8>) -> Double? {
        let bytes = Array(text)
        guard bytes.count == 28, bytes[0] == UInt8(ascii: "["), bytes[27] == UInt8(ascii: "]"), bytes[21] == UInt8(ascii: " ") else { return nil }
        guard let day = number(bytes, 1, 2), let month = months.firstIndex(of: String(decoding: bytes[4..<7], as: UTF8.self)),
              let year = number(bytes, 8, 4), let hour = number(bytes, 13, 2), let minute = number(bytes, 16, 2), let second = number(bytes, 19, 2),
              let offsetHours = number(bytes, 23, 2), let offsetMinutes = number(bytes, 25, 2),
              bytes[3] == UInt8(ascii: "/"), bytes[7] == UInt8(ascii: "/"), bytes[12] == UInt8(ascii: ":"), bytes[15] == UInt8(ascii: ":"), bytes[18] == UInt8(ascii: ":"),
              bytes[22] == UInt8(ascii: "+") || bytes[22] == UInt8(ascii: "-") else { return nil }
        guard let seconds = utc(year: year, month: month + 1, day: day, hour: hour, minute: minute, second: second) else { return nil }
        let offset = (offsetHours * 60 + offsetMinutes) * 60
        return Double(bytes[22] == UInt8(ascii: "+") ? seconds - offset : seconds + offset)
    }

    /// CloudFront's `2019-12-04` and `21:02:31` (UTC).
    static func w3c(date: ArraySlice<UInt8>, time: ArraySlice<UInt8>) -> Double? {
        let d = Array(date), t = Array(time)
        guard d.count == 10, t.count == 8, d[4] == UInt8(ascii: "-"), d[7] == UInt8(ascii: "-"), t[2] == UInt8(ascii: ":"), t[5] == UInt8(ascii: ":"),
              let year = number(d, 0, 4), let month = number(d, 5, 2), let day = number(d, 8, 2),
              let hour = number(t, 0, 2), let minute = number(t, 3, 2), let second = number(t, 6, 2) else { return nil }
        return utc(year: year, month: month, day: day, hour: hour, minute: minute, second: second).map(Double.init)
    }

    private static func number(_ bytes: [UInt8], _ start: Int, _ count: Int) -> Int? {
        var value = 0
        for byte in bytes[start..<(start + count)] {
            guard (byte &- UInt8(ascii: "0")) < 10 else { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return value
    }

    /// Seconds since 1970 of a UTC civil time (Howard Hinnant's days_from_civil); nil out of range.
    static func utc(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) -> Int? {
        guard (1970...9999).contains(year), (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61 else { return nil }
        let y = month <= 2 ? year - 1 : year
        let era = y / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        return ((days * 24 + hour) * 60 + minute) * 60 + second
    }
}

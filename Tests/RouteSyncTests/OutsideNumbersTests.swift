import Testing
@testable import RouteSync
@testable import Transport

/// The types every outside number enters through (G5), at their edges: what fits is kept
/// exactly, what does not is nil, and nothing traps.
@Suite struct OutsideNumbersTests {
    @Test func secondsAcceptZeroToTheLimitOnly() {
        #expect(Seconds(exactly: 0.0)?.value == 0)
        #expect(Seconds(exactly: -0.0) != nil)
        #expect(Seconds(exactly: Seconds.limit)?.value == 1e18)
        #expect(Seconds(exactly: Seconds.limit.nextUp) == nil)
        #expect(Seconds(exactly: 1e20) == nil)
        #expect(Seconds(exactly: 9.3e18) == nil)
        for bad in [-1, -.leastNonzeroMagnitude, .nan, .infinity, -.infinity, 1e308, .greatestFiniteMagnitude] as [Double] {
            #expect(Seconds(exactly: bad) == nil, "\(bad)")
        }
        #expect(Seconds(exactly: Int64.max) == nil)
        #expect(Seconds(exactly: Int64(-1)) == nil)
        #expect(Seconds(exactly: Int64(86_400)) == .day)
    }

    @Test func aMomentCenturiesAwayIsAValidTimeAndItsSumsFitAnInt64() {
        #expect(UnixTime(exactly: 1e16)?.value == 1e16)
        #expect(UnixTime(exactly: 0) != nil)
        for bad in [-1, .nan, .infinity, -.infinity, 1e300, 1e308, 9.3e18] as [Double] {
            #expect(UnixTime(exactly: bad) == nil, "\(bad)")
        }
        let far = UnixTime(exactly: Seconds.limit)!.adding(Seconds(exactly: Seconds.limit)!)
        #expect(far.isFinite && Int64(exactly: far) != nil)
    }

    @Test func byteCountsAndTheirSumsAreChecked() {
        #expect(ByteCount(exactly: Int64(0))?.value == 0)
        #expect(ByteCount(exactly: ByteCount.limit)?.value == 1 << 53)
        #expect(ByteCount(exactly: ByteCount.limit + 1) == nil)
        #expect(ByteCount(exactly: Int64.max) == nil)
        #expect(ByteCount(exactly: Int64(-1)) == nil)
        #expect(ByteCount(exactly: 1.5) == nil)
        #expect(ByteCount(exactly: Double.nan) == nil)
        #expect(ByteCount(exactly: 1e308) == nil)
        #expect(ByteCount(exactly: 4096.0)?.value == 4096)
        let max = ByteCount(exactly: ByteCount.limit)!
        #expect(max.adding(.zero) == max)
        #expect(max.adding(ByteCount(exactly: Int64(1))!) == nil)
        #expect(ByteCount.sum([max, max, max]) == nil)
        #expect(ByteCount.sum([ByteCount(exactly: Int64(2))!, ByteCount(exactly: Int64(3))!])?.value == 5)
    }

    @Test func wholeNumbersForDisplayAndWaitsClampInsteadOfTrapping() {
        #expect(Whole.clamped(0) == 0)
        #expect(Whole.clamped(2.5) == 3)
        #expect(Whole.clamped(.nan) == 0)
        #expect(Whole.clamped(.infinity) == .max)
        #expect(Whole.clamped(-.infinity) == .min)
        #expect(Whole.clamped(1e308) == .max)
        #expect(Whole.clamped(9.3e18) == .max)
        #expect(Whole.clamped(Double(Int.max)) == .max)
        #expect(Whole.clamped(1e300, to: 0...100) == 100)
        #expect(Whole.clamped(.nan, to: 5...10) == 5)
        #expect(Whole.text(12) == "12")
        #expect(Whole.text(1.5) == "1.5")
        #expect(Whole.text(1e300) == "1e+300")
        #expect(Whole.sleepMilliseconds(1.5) == 1500)
        #expect(Whole.sleepMilliseconds(-5) == 0)
        #expect(Whole.sleepMilliseconds(.nan) == 0)
        #expect(Whole.sleepMilliseconds(1e300) == 1_000_000_000_000)
        #expect(Whole.sleepMilliseconds(1e16, ceiling: .day) == 86_400_000)
    }

    @Test func retryAfterIsClampedToADayAndGarbageIsIgnored() {
        let now = 1_800_000_000.0
        #expect(HeaderValue.retryAfter("0", now: now) == .zero)
        #expect(HeaderValue.retryAfter("120", now: now)?.value == 120)
        #expect(HeaderValue.retryAfter("86400", now: now) == .day)
        #expect(HeaderValue.retryAfter("86401", now: now) == .day)
        #expect(HeaderValue.retryAfter("99999999999999999999", now: now) == .day)
        #expect(HeaderValue.retryAfter(String(repeating: "9", count: 400), now: now) == .day)
        for garbage in ["-5", "+5", "1e308", "1e3", "1.5", "nan", "inf", "", " ", "5s", "0x10", "١٢"] {
            #expect(HeaderValue.retryAfter(garbage, now: now) == nil, "\(garbage)")
        }
        // An HTTP-date: the time until it, never negative, at most a day.
        #expect(HeaderValue.retryAfter("Thu, 01 Jan 1970 00:00:00 GMT", now: now) == .zero)
        #expect(HeaderValue.retryAfter("Fri, 31 Dec 9999 23:59:59 GMT", now: now) == .day)
    }

    @Test func validatorsAndLengthsFromTheOriginAreBounded() {
        #expect(HeaderValue.validator("\"abc\"") == "\"abc\"")
        #expect(HeaderValue.validator(String(repeating: "x", count: HeaderValue.maxValidatorBytes)) != nil)
        #expect(HeaderValue.validator(String(repeating: "x", count: HeaderValue.maxValidatorBytes + 1)) == nil)
        #expect(HeaderValue.validator("a\r\nX-Evil: 1") == nil)
        #expect(HeaderValue.validator("") == nil)
        #expect(HeaderValue.contentLength("1234")?.value == 1234)
        #expect(HeaderValue.contentLength("0")?.value == 0)
        for bad in ["-1", "+1", "1e3", "9223372036854775807", "99999999999999999999", "", "12 34"] {
            #expect(HeaderValue.contentLength(bad) == nil, "\(bad)")
        }
    }

    @Test func theHeaderParserKeepsOnlyInRangeValues() {
        var headers = ResponseHeaders()
        for line in ["HTTP/1.1 503 Busy\r\n", "Retry-After: 99999999999999999999\r\n", "ETag: \"\(String(repeating: "e", count: 100_000))\"\r\n",
                     "Content-Length: 99999999999999999999\r\n"] {
            Array(line.utf8).withUnsafeBytes { headers.consume($0) }
        }
        #expect(headers.status == 503)
        #expect(headers.retryAfter == 86_400)
        #expect(headers.etag == nil)
        #expect(headers.contentLength == nil)
        var negative = ResponseHeaders()
        Array("Retry-After: -5\r\n".utf8).withUnsafeBytes { negative.consume($0) }
        #expect(negative.retryAfter == nil)
    }
}

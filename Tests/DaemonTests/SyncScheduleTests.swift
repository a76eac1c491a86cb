import Testing
import TestOrigin
@testable import Daemon

@Suite struct SyncScheduleTests {
    @Test func successesLandOncePerWindowAtARandomPoint() {
        var schedule = SyncSchedule(interval: 300)
        // Finished 10 s into the window: the rest of it, then a random point of the next.
        #expect(schedule.delay(after: .success, random: 0, elapsedInWindow: 10) == 290)
        #expect(schedule.delay(after: .success, random: 0.5, elapsedInWindow: 10) == 440)
        #expect(schedule.delay(after: .success, random: 0.999, elapsedInWindow: 0) < 600)
    }

    @Test func failuresBackOffInProportionToTheIntervalWithEqualJitter() {
        var schedule = SyncSchedule(interval: 80)
        // Ceilings interval/4, /2: each wait between half the ceiling and the ceiling.
        #expect(schedule.delay(after: .failure(retryAfter: nil), random: 0, elapsedInWindow: 0) == 10)
        #expect(schedule.delay(after: .failure(retryAfter: nil), random: 0.5, elapsedInWindow: 0) == 30)
        // Then a window of one interval around the interval: on average one retry per interval.
        #expect(schedule.delay(after: .failure(retryAfter: nil), random: 0, elapsedInWindow: 0) == 40)
        #expect(schedule.delay(after: .failure(retryAfter: nil), random: 0.5, elapsedInWindow: 0) == 80)
        #expect(schedule.delay(after: .failure(retryAfter: nil), random: 1, elapsedInWindow: 0) == 120)
        #expect(schedule.failures == 5)
        _ = schedule.delay(after: .success, random: 0, elapsedInWindow: 0)
        #expect(schedule.failures == 0)
        #expect(schedule.delay(after: .failure(retryAfter: nil), random: 1, elapsedInWindow: 0) == 20)
    }

    @Test func retryAfterIsAFloor() {
        var schedule = SyncSchedule(interval: 60)
        #expect(schedule.delay(after: .failure(retryAfter: 120), random: 0.1, elapsedInWindow: 0) == 120)
    }

    /// B7's outage bar on the schedule alone: during a 60 s outage a fleet sends at most 3× the
    /// table requests of a normal 60 s, at short and long intervals alike.
    @Test(arguments: [10.0, 30.0, 60.0, 300.0])
    func anOutageDoesNotMultiplyTheFleetsRequests(interval: Double) {
        var random = SplitMix(seed: UInt64(interval))
        let devices = 2000, outage = 60.0
        var requests = 0
        for _ in 0..<devices {
            var schedule = SyncSchedule(interval: interval)
            // In steady state a device's next poll is anywhere in its window.
            var t = interval * random.next()
            while t < outage {
                requests += 1
                t += schedule.delay(after: .failure(retryAfter: nil), random: random.next(), elapsedInWindow: 0)
            }
        }
        let normal = Double(devices) * outage / interval
        #expect(Double(requests) <= 3 * normal, "\(requests) requests in the outage, \(Int(normal)) in a normal 60 s")
    }

    /// B7's recovery bar on the schedule alone: once an outage has lasted longer than the backoff
    /// takes to reach the interval, the fleet comes back at its normal rate, not above it. Each
    /// device is run as SchedulerService runs it (its window, the first success after the outage).
    @Test(arguments: [10.0, 20.0, 30.0])
    func afterAnOutageTheFleetComesBackAtItsNormalRate(interval: Double) {
        var random = SplitMix(seed: 7 + UInt64(interval))
        let devices = 5000, outage = 60.0
        var seconds = [Int](repeating: 0, count: 40)
        for _ in 0..<devices {
            var schedule = SyncSchedule(interval: interval)
            var t = interval * random.next()
            var windowStart = t - interval * random.next()
            while t < outage + Double(seconds.count) {
                if t >= outage { seconds[Int(t - outage)] += 1 }
                if t - windowStart >= interval { windowStart = t }
                let outcome: SyncSchedule.Outcome = t < outage ? .failure(retryAfter: nil) : .success
                let delay = schedule.delay(after: outcome, random: random.next(), elapsedInWindow: t - windowStart)
                if outcome == .success { windowStart += interval }
                t += delay
            }
        }
        let normal = Double(devices) / interval
        let firstTen = Double(seconds.prefix(10).reduce(0, +)) / 10
        // Retries at up to the interval with equal jitter came back a third above it (1.2–1.4×).
        #expect(firstTen <= 1.15 * normal, "\(firstTen) a second in the first 10 s after the outage, \(normal) normally")
        #expect(Double(seconds.max()!) <= 1.5 * normal, "\(seconds)")
    }
}

@Suite struct HTTPPieceTests {
    @Test func byteRanges() {
        #expect(ByteRange.parse(nil, size: 100) == .whole)
        #expect(ByteRange.parse("bytes=0-9", size: 100) == .partial(0...9))
        #expect(ByteRange.parse("bytes=90-", size: 100) == .partial(90...99))
        #expect(ByteRange.parse("bytes=-10", size: 100) == .partial(90...99))
        #expect(ByteRange.parse("bytes=50-500", size: 100) == .partial(50...99))
        #expect(ByteRange.parse("bytes=100-", size: 100) == .unsatisfiable)
        #expect(ByteRange.parse("bytes=0-1,5-6", size: 100) == .whole)
        #expect(ByteRange.parse("items=0-1", size: 100) == .whole)
        #expect(ByteRange.parse("bytes=9-3", size: 100) == .whole)
        // Positions past any file, however many digits, mean its end (RFC 9110 §14.1.2).
        #expect(ByteRange.parse("bytes=0-99999999999999999999", size: 100) == .partial(0...99))
        #expect(ByteRange.parse("bytes=-99999999999999999999", size: 100) == .partial(0...99))
        #expect(ByteRange.parse("bytes=-101", size: 100) == .partial(0...99))
        #expect(ByteRange.parse("bytes=99999999999999999999-", size: 100) == .unsatisfiable)
        #expect(ByteRange.parse("bytes=0-1x", size: 100) == .whole)
        #expect(ByteRange.parse("bytes=+1-5", size: 100) == .whole)
    }

    @Test func mediaTypesAndCompression() {
        #expect(MediaTypes.type(for: "js/app.js").hasPrefix("text/javascript"))
        #expect(MediaTypes.type(for: "img/logo.PNG") == "image/png")
        #expect(MediaTypes.type(for: "dir.v2/README") == "application/octet-stream")
        #expect(MediaTypes.compresses(MediaTypes.type(for: "a.css")))
        #expect(!MediaTypes.compresses(MediaTypes.type(for: "a.png")))
    }

    @Test func conditionalAndEncodingHeaders() {
        #expect(Preconditions.matches("\"abc\"", "\"abc\"", weak: true))
        #expect(Preconditions.matches("\"x\", W/\"abc\"", "\"abc\"", weak: true))
        #expect(Preconditions.matches("*", "\"abc\"", weak: true))
        #expect(!Preconditions.matches("\"abd\"", "\"abc\"", weak: true))
        #expect(FileServer.acceptsGzip("gzip, deflate, br"))
        #expect(FileServer.acceptsGzip("br;q=1.0, gzip;q=0.8"))
        #expect(!FileServer.acceptsGzip("gzip;q=0"))
        #expect(!FileServer.acceptsGzip("identity"))
        #expect(!FileServer.acceptsGzip(nil))
    }
}

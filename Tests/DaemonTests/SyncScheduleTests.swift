import Testing
@testable import Daemon

@Suite struct SyncScheduleTests {
    @Test func successesLandOncePerWindowAtARandomPoint() {
        var schedule = SyncSchedule(interval: 300)
        // Finished 10 s into the window: the rest of it, then a random point of the next.
        #expect(schedule.delay(after: .success, random: 0, elapsedInWindow: 10) == 290)
        #expect(schedule.delay(after: .success, random: 0.5, elapsedInWindow: 10) == 440)
        #expect(schedule.delay(after: .success, random: 0.999, elapsedInWindow: 0) < 600)
    }

    @Test func failuresBackOffExponentiallyWithJitterCappedAtTheInterval() {
        var schedule = SyncSchedule(interval: 60, backoffBase: 5)
        #expect(schedule.delay(after: .failure(retryAfter: nil), random: 1, elapsedInWindow: 0) == 5)
        #expect(schedule.delay(after: .failure(retryAfter: nil), random: 1, elapsedInWindow: 0) == 10)
        #expect(schedule.delay(after: .failure(retryAfter: nil), random: 1, elapsedInWindow: 0) == 20)
        #expect(schedule.delay(after: .failure(retryAfter: nil), random: 1, elapsedInWindow: 0) == 40)
        #expect(schedule.delay(after: .failure(retryAfter: nil), random: 1, elapsedInWindow: 0) == 60)
        #expect(schedule.delay(after: .failure(retryAfter: nil), random: 0.5, elapsedInWindow: 0) == 30)
        #expect(schedule.failures == 6)
        _ = schedule.delay(after: .success, random: 0, elapsedInWindow: 0)
        #expect(schedule.failures == 0)
    }

    @Test func retryAfterIsAFloor() {
        var schedule = SyncSchedule(interval: 60, backoffBase: 5)
        #expect(schedule.delay(after: .failure(retryAfter: 120), random: 0.1, elapsedInWindow: 0) == 120)
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

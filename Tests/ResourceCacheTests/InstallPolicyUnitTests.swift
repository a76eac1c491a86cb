import Foundation
import ResourceCache
import RouteSync
import Testing

/// The install policies' pure parts: windows in local time, and the two decisions.
@Suite(.serialized) struct InstallPolicyUnitTests {
    /// Unix seconds of a UTC wall-clock moment (TZ is set to UTC for these tests).
    static func utc(_ text: String) -> Double {
        let formatter = ISO8601DateFormatter()
        return formatter.date(from: text)!.timeIntervalSince1970
    }

    init() { setenv("TZ", "UTC", 1); tzset() }

    @Test func windowsAcrossMidnightAndOnSomeDays() throws {
        let night = try TimeWindow("daily 22:00-06:00")
        #expect(night.contains(Self.utc("2026-11-26T23:30:00Z")))
        #expect(night.contains(Self.utc("2026-11-27T05:59:00Z")))
        #expect(!night.contains(Self.utc("2026-11-27T06:00:00Z")))
        #expect(night.nextOpening(after: Self.utc("2026-11-27T12:00:00Z")) == Self.utc("2026-11-27T22:00:00Z"))

        // 2026-11-27 is a Friday, 2026-11-28 a Saturday.
        let weekdays = try TimeWindow("Mon-Fri 01:00-05:00")
        #expect(weekdays.contains(Self.utc("2026-11-27T02:00:00Z")))
        #expect(!weekdays.contains(Self.utc("2026-11-28T02:00:00Z")))
        #expect(weekdays.nextOpening(after: Self.utc("2026-11-27T06:00:00Z")) == Self.utc("2026-11-30T01:00:00Z"), "Friday's has passed: Monday's")
        let friday = try TimeWindow("Fri 23:00-01:00")
        #expect(friday.contains(Self.utc("2026-11-28T00:30:00Z")), "the morning after a Friday")
        #expect(try TimeWindow("Fri-Mon 00:00-24:00").days == [5, 6, 0, 1])
        #expect(try TimeWindow("sat,sun 09:00-18:00").days == [6, 0])
    }

    @Test func aWindowThatCanNeverOpenOrDoesNotParseIsRefused() {
        for bad in ["daily 10:00-10:00", "daily 00:00-24:00 extra", "Mon-Fry 01:00-02:00", "daily 25:00-02:00", "daily 1:5-02:00", "01:00-02:00", ""] {
            #expect(throws: CenariusError.self, "\(bad)") { _ = try TimeWindow(bad) }
        }
    }

    @Test func theDownloadDecision() throws {
        var policy = InstallPolicy()
        let now = Self.utc("2026-11-27T12:00:00Z")
        #expect(policy.download(now: now, bytes: 10) == nil)
        policy.downloadWindows = [try TimeWindow("daily 22:00-06:00"), try TimeWindow("daily 13:00-14:00")]
        #expect(policy.download(now: now, bytes: 10)?.reason == "download-window")
        #expect(policy.download(now: now, bytes: 10)?.until == Self.utc("2026-11-27T13:00:00Z"), "the first of the windows to open")
        #expect(policy.download(now: now, bytes: 0) == nil, "nothing to download: nothing to wait for")
        #expect(policy.download(now: Self.utc("2026-11-27T13:30:00Z"), bytes: 10) == nil)

        policy.downloadWindows = []
        policy.metered = try InstallPolicy.Metered("small:5K")
        policy.meteredProbe = { true }
        #expect(policy.download(now: now, bytes: 4096) == nil)
        #expect(policy.download(now: now, bytes: 6000)?.reason == "metered")
        #expect(policy.download(now: now, bytes: nil)?.reason == "metered", "a table without sizes is not known to be small")
        policy.meteredProbe = { false }
        policy.meteredFile = "/"
        #expect(policy.download(now: now, bytes: 6000) == nil, "NetworkManager's word comes before the file's")
        policy.meteredProbe = { nil }
        #expect(policy.download(now: now, bytes: 6000)?.reason == "metered", "the file exists")
        for bad in ["small", "small:", "small:5X", "never"] {
            #expect(throws: CenariusError.self, "\(bad)") { _ = try InstallPolicy.Metered(bad) }
        }
    }

    @Test func theSwitchDecision() throws {
        var policy = InstallPolicy()
        let now = Self.utc("2026-11-27T12:00:00Z")
        policy.switchAtStart = true
        #expect(policy.switch(now: now, switching: .scheduled)?.reason == "switch-at-start")
        for allowed in [InstallPolicy.Switching.start, .request, .force] { #expect(policy.switch(now: now, switching: allowed) == nil) }
        policy.switchWindows = [try TimeWindow("daily 03:00-04:00")]
        #expect(policy.switch(now: now, switching: .request)?.reason == "switch-window")
        #expect(policy.switch(now: now, switching: .force) == nil)
        policy.inhibitFiles = ["/nonexistent-inhibit", "/"]
        #expect(policy.switch(now: now, switching: .start)?.reason == "inhibited")
        #expect(policy.switch(now: now, switching: .force) == nil, "force overrides inhibit files too")
    }
}

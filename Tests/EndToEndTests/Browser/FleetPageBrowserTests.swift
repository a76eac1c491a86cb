import Foundation
import Testing
import TestOrigin

/// `fleet --html` as a publisher opens it: the page of a simulated rollout (`FleetTraffic`) rendered in
/// headless Chromium from the file alone, and what it shows read back from the rendered document.
@Suite(.awaitsCleanups) struct FleetPageBrowserTests {
    @Test func thePageShowsTheRolloutsAdoptionItsRollbacksAndWhyTheRestAreNotOnIt() throws {
        let traffic = FleetTraffic()
        let dir = try Scratch()
        defer { dir.remove() }
        var paths = try traffic.write(.nginx, in: dir.path("logs"))
        // A forged report whose release name is markup: shown as text, never run. (Early in the log: the
        // newest release is the last to appear, and a forged one could take that place; docs/threats.md.)
        try dir.write("logs/forged.log", #"{"time":"1764000000.500","report":"device=\"f00d\", release=\"<img src=x onerror=document.title='owned'>\", state=confirmed"}"# + "\n")
        paths.append(dir.path("logs/forged.log"))
        let run = try Binary.run(["fleet", "--html", dir.path("fleet.html")] + paths)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("91 devices"), "the usual output too: \(run.stdout)")

        let browser = try Browser()
        try browser.navigate("file://" + dir.path("fleet.html"))
        try browser.screenshot("fleet-page")
        func text(_ selector: String) throws -> String { try browser.evaluate("document.querySelector(\(Browser.quoted(selector)))?.innerText ?? ''") as? String ?? "" }
        // Nothing was fetched: the page is all there is.
        #expect(try browser.evaluate("performance.getEntriesByType('resource').length") as? Int == 0)
        #expect(try browser.evaluate("document.querySelectorAll('img, script, link, iframe').length") as? Int == 0)
        #expect(try browser.evaluate("document.title") as? String == "cenariusd fleet")
        #expect(try text("#releases + table").contains("<img src=x onerror"), "the forged name as text")

        // The adoption curve of 2026.11-b rises from none to its 45 devices, drawn as a line the browser laid out.
        let curve = try #require(try browser.evaluate("""
            (() => { const line = [...document.querySelectorAll('#adoption-chart polyline')].find(l => l.dataset.release === '2026.11-b');
              if (!line) return null; const p = line.points; const box = line.getBBox();
              return [p.numberOfItems, p.getItem(0).y, p.getItem(p.numberOfItems - 1).y, box.width]; })()
            """) as? [Double])
        #expect(curve[0] == 61 && curve[1] > curve[2] && curve[3] > 700, "\(curve)")
        let legend = try text("#adoption-chart + .legend")
        #expect(legend.contains("2026.11-b: 45 now") && legend.contains("2026.11-a: 45 now"), "\(legend)")
        // Rollbacks and refusals over time: 30 devices gave up 2026.11-b, 15 of them also 2026.11-0.
        let failed = try text("#failed-chart + .legend")
        #expect(failed.contains("2026.11-b: 30 now") && failed.contains("2026.11-0: 15 now"), "\(failed)")
        // Why the 46 devices not on the newest release are not (the forged one reported no code).
        let heading = try text("#why")
        #expect(heading.contains("Not on 2026.11-b, the newest: 46 devices"), "\(heading)")
        let why = try text("#why + table")
        for code in ["held-back\t15", "deferred-moment\t15", "held\t15"] { #expect(why.contains(code), "\(why)") }
        // What LAN peers kept off the uplink, per release, as each device's latest report says.
        let saved = try text("#uplink")
        #expect(saved.contains("Bytes kept off the uplink: 99%"), "\(saved)")
        let uplink = try text("#uplink + table")
        for (name, bytes) in traffic.bytes { #expect(uplink.contains("\(name)\t\(bytes.peer)\t\(bytes.origin)\t99%"), "\(uplink)") }
    }
}

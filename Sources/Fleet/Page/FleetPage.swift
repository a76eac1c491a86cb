/// `fleet --html`: one page that needs nothing but itself to open (inline SVG and CSS, no script, no
/// request): per release the devices on it over time (a staged rollout's adoption curve), the devices
/// that rolled it back or refused it over time, and why the devices not on the newest release are not.
/// Release names and codes come from reports anyone can send: every one is escaped.
package enum FleetPage {
    private static let colors = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"]
    /// Releases drawn: the most tried; the table lists them all.
    static let drawn = 8

    package static func html(_ tally: FleetTally, timeline: FleetTimeline?) -> String {
        let releases = tally.releases()
        var page = """
            <!doctype html><html lang="en"><head><meta charset="utf-8"><title>cenariusd fleet</title>
            <style>body{font:14px system-ui,sans-serif;margin:24px;color:#222}h1{font-size:20px}h2{font-size:16px;margin-top:28px}
            table{border-collapse:collapse}td,th{padding:3px 10px;border-bottom:1px solid #ddd;text-align:right}td:first-child,th:first-child{text-align:left}
            .legend span{display:inline-block;margin-right:16px}.legend i{display:inline-block;width:12px;height:12px;margin-right:5px;vertical-align:middle}
            svg text{font:11px system-ui,sans-serif;fill:#555}</style></head><body>
            <h1>Fleet: \(tally.devices) devices in \(tally.lines) log lines</h1>

            """
        if let timeline, timeline.times.count > 1 {
            let shown = Array(timeline.releases.prefix(drawn))
            page += "<h2 id=\"adoption\">Devices on each release</h2>\n"
                + chart(shown.filter { $0.on.contains { $0 > 0 } }.map { ($0.name, $0.on) }, times: timeline.times, id: "adoption-chart")
            let failing = shown.filter { $0.failed.contains { $0 > 0 } }
            page += "<h2 id=\"failed\">Devices that rolled a release back or refused it</h2>\n"
                + (failing.isEmpty ? "<p>None.</p>\n" : chart(failing.map { ($0.name, $0.failed) }, times: timeline.times, id: "failed-chart"))
        }
        page += "<h2 id=\"releases\">Releases now</h2>\n<table><tr><th>release</th><th>devices</th><th>confirmed</th><th>trial</th><th>deferred</th><th>held</th><th>rolled back/refused</th></tr>\n"
        for release in releases {
            page += "<tr><td>\(escaped(release.name))</td>" + [release.seen, release.confirmed, release.trial, release.deferred, release.held, release.failed]
                .map { "<td>\($0)</td>" }.joined() + "</tr>\n"
        }
        page += "</table>\n"
        let total = tally.totalBytes()
        if total.peer > 0 || total.origin > 0 {
            // What LAN peers kept off the uplink (docs/peers.md), by each device's latest report.
            page += "<h2 id=\"uplink\">Bytes kept off the uplink: \(percent(total))% (\(total.peer) of \(FleetTally.sum(total.peer, total.origin)) from LAN peers)</h2>\n"
                + "<table><tr><th>release</th><th>from peers</th><th>from the origin</th><th>kept off the uplink</th></tr>\n"
            for release in releases where release.peerBytes > 0 || release.originBytes > 0 {
                page += "<tr><td>\(escaped(release.name))</td><td>\(release.peerBytes)</td><td>\(release.originBytes)</td>"
                    + "<td>\(percent(PeerBytes(peer: release.peerBytes, origin: release.originBytes)))%</td></tr>\n"
            }
            page += "</table>\n"
        }
        if let notOn = tally.notOnNewest() {
            page += "<h2 id=\"why\">Not on \(escaped(notOn.release)), the newest: \(notOn.devices) devices</h2>\n<table><tr><th>why</th><th>devices</th></tr>\n"
            for (code, devices) in notOn.why.sorted(by: { ($0.value, $1.key) > ($1.value, $0.key) }) {
                page += "<tr><td>\(escaped(code))</td><td>\(devices)</td></tr>\n"
            }
            page += "</table>\n"
        }
        return page + "</body></html>\n"
    }

    /// The share of the bytes that came from peers, in whole percent (rounded down, as `fleet` says it).
    private static func percent(_ bytes: PeerBytes) -> Int {
        let total = Double(bytes.peer) + Double(bytes.origin)
        return total > 0 ? Int((Double(bytes.peer) / total * 100).rounded(.down)) : 0
    }

    /// A line chart of `series` over `times`, with its legend.
    private static func chart(_ series: [(name: String, values: [Int])], times: [Double], id: String) -> String {
        let (width, height, left, bottom, top) = (860.0, 240.0, 48.0, 24.0, 10.0)
        let most = max(1, series.flatMap(\.values).max() ?? 1)
        func x(_ index: Int) -> Double { left + (width - left - 10) * Double(index) / Double(max(1, times.count - 1)) }
        func y(_ value: Int) -> Double { top + (height - top - bottom) * (1 - Double(value) / Double(most)) }
        func number(_ value: Double) -> String { String(Int(value.rounded())) }
        var svg = "<svg id=\"\(id)\" width=\"\(Int(width))\" height=\"\(Int(height))\" viewBox=\"0 0 \(Int(width)) \(Int(height))\" role=\"img\">\n"
        for tick in [0, most / 2, most] {
            svg += "<line x1=\"\(Int(left))\" x2=\"\(Int(width - 10))\" y1=\"\(number(y(tick)))\" y2=\"\(number(y(tick)))\" stroke=\"#eee\"/>"
                + "<text x=\"\(Int(left - 6))\" y=\"\(number(y(tick) + 4))\" text-anchor=\"end\">\(tick)</text>\n"
        }
        for (index, anchor) in [(0, "start"), (times.count - 1, "end")] {
            svg += "<text x=\"\(number(x(index)))\" y=\"\(Int(height - 6))\" text-anchor=\"\(anchor)\">\(utc(times[index]))</text>\n"
        }
        var legend = "<p class=\"legend\">"
        for (index, line) in series.enumerated() {
            let color = colors[index % colors.count]
            let points = line.values.enumerated().map { "\(number(x($0.offset))),\(number(y($0.element)))" }.joined(separator: " ")
            svg += "<polyline fill=\"none\" stroke=\"\(color)\" stroke-width=\"2\" data-release=\"\(escaped(line.name))\" points=\"\(points)\"/>\n"
            legend += "<span><i style=\"background:\(color)\"></i>\(escaped(line.name)): \(line.values.last ?? 0) now, at most \(line.values.max() ?? 0)</span>"
        }
        return svg + "</svg>\n" + legend + "</p>\n"
    }

    /// `2026-11-27 15:04 UTC` (Howard Hinnant's civil_from_days).
    static func utc(_ seconds: Double) -> String {
        let whole = Int(seconds.rounded(.down))
        let days = whole >= 0 ? whole / 86_400 : (whole - 86_399) / 86_400
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        let minutes = (whole - days * 86_400) / 60
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(year)-\(two(month))-\(two(day)) \(two(minutes / 60)):\(two(minutes % 60)) UTC"
    }

    static func escaped(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(character)
            }
        }
        return out
    }
}

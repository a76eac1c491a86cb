import Foundation
import Testing
import TestOrigin

/// Media in a real browser: Chromium plays and seeks a file the daemon serves with Range (206),
/// and a reload revalidates with 304s instead of downloading again.
@Suite(.awaitsCleanups) struct MediaBrowserTests {
    /// A 60 s mono 16-bit PCM WAV (about 5 MB): a format Chromium plays without codecs.
    static func wav(seconds: Int = 60, rate: Int = 44100) -> [UInt8] {
        let samples = seconds * rate
        var bytes: [UInt8] = []
        func u32(_ v: Int) { bytes += (0..<4).map { UInt8((v >> ($0 * 8)) & 0xFF) } }
        func u16(_ v: Int) { bytes += (0..<2).map { UInt8((v >> ($0 * 8)) & 0xFF) } }
        bytes += Array("RIFF".utf8); u32(36 + samples * 2); bytes += Array("WAVEfmt ".utf8)
        u32(16); u16(1); u16(1); u32(rate); u32(rate * 2); u16(2); u16(16)
        bytes += Array("data".utf8); u32(samples * 2)
        bytes.reserveCapacity(bytes.count + samples * 2)
        for i in 0..<samples {
            let value = Int(8000 * sin(Double(i) * 2 * .pi * 440 / Double(rate)))
            u16(value & 0xFFFF)
        }
        return bytes
    }

    @Test func aSeekIsAnsweredWith206AndAReloadRevalidatesWith304() async throws {
        let (origin, dir, _) = try await OriginAndDevice.make()
        let page = """
            <!doctype html><title>media</title>
            <audio id="a" src="media/tone.wav" preload="auto"></audio>
            <script>
            const a = document.getElementById('a');
            window.seeked = false;
            a.addEventListener('loadedmetadata', () => { a.currentTime = 45; });
            a.addEventListener('seeked', () => { window.seeked = true; });
            </script>
            """
        _ = origin.publish(["index.html": Array(page.utf8), "media/tone.wav": Self.wav()])
        let daemon = try Device(in: dir).serve(remote: origin.url)
        defer { _ = daemon.terminate() }
        let http = try daemon.waitUntilServing()
        let browser = try Browser()
        try browser.call("Network.enable")
        let url = "http://127.0.0.1:\(http.port)/index.html"
        try browser.navigate(url)
        try browser.waitFor("window.seeked === true && document.getElementById('a').currentTime >= 44")
        // Keep reading events for a moment so the media responses are collected.
        _ = try browser.evaluate("new Promise(r => setTimeout(r, 300))")
        let media = browser.events("Network.responseReceived").compactMap { $0["response"] as? [String: Any] }
            .filter { ($0["url"] as? String)?.hasSuffix("tone.wav") == true }
        #expect(media.contains { $0["status"] as? Int == 206 }, "statuses: \(media.map { $0["status"] ?? "?" })")
        #expect(!media.contains { $0["status"] as? Int == 200 }, "the whole file was never sent for a seek")

        // Reload: index.html (no-cache) is revalidated with its ETag and answered 304.
        _ = try browser.evaluate("window.before = true")
        try browser.call("Page.reload")
        try browser.waitFor("window.before === undefined && window.seeked === true")
        _ = try browser.evaluate("new Promise(r => setTimeout(r, 300))")
        // What went over the wire (responseReceived shows a revalidated response as the cached 200).
        let ids = Set(browser.events("Network.responseReceived").filter { ($0["response"] as? [String: Any])?["url"] as? String == url }
            .compactMap { $0["requestId"] as? String })
        let wire = browser.events("Network.responseReceivedExtraInfo").filter { ids.contains($0["requestId"] as? String ?? "") }
            .compactMap { $0["statusCode"] as? Int }
        #expect(wire.contains(304), "the reload revalidated index.html with a 304: \(wire)")
        try browser.screenshot("media-seek")
    }
}

import Foundation
import Testing
import TestOrigin

/// RFC 9112 §3.2: a server must accept a request target in absolute-form as well as origin-form
/// (the contract says so for `serve`); the target's authority stands for Host (§3.2.2).
@Suite(.awaitsCleanups) struct RequestTargetTests {
    @Test func absoluteFormTargetsAreServedLikeOriginForm() async throws {
        let (origin, dir, _) = try await OriginAndDevice.make()
        origin.publish(["index.html": "home", "js/app.js": "go()"])
        let daemon = try Device(in: dir).serve(remote: origin.url)
        defer { _ = daemon.terminate() }
        let http = try daemon.waitUntilServing()
        let base = "http://127.0.0.1:\(daemon.port)"
        #expect(try http.get(base + "/js/app.js").text == "go()")
        #expect(try http.get("HTTP://127.0.0.1:\(daemon.port)/js/app.js?v=2").text == "go()")
        #expect(try http.get(base).text == "home", "an empty path is /")
        #expect(try http.get(base + "/_cenarius/resolve?uri=js/app.js").json()["uri"] as? String == "js/app.js")
        #expect(try http.get(base + "/nope.txt").status == 404)
        // Not a form a GET may use: refused, never taken for a file name.
        #expect(try http.get("ftp://127.0.0.1/js/app.js").status == 404)
    }
}

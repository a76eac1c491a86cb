import Testing
@testable import ResourceCache
import RouteSync

/// The one mirror loop of sync and seed, without a network: which failures pass to the next
/// remote, which stop the loop, and the error thrown when none could.
@Suite struct MirrorsTests {
    let remotes = try! ["http://a.example", "http://b.example", "http://c.example"].map { try Remote($0, routesName: "Routes.json") }

    @Test func aRemoteOrRefusedFailurePassesToTheNextRemote() throws {
        var tried: [String] = []
        let answer = try Mirrors.first(remotes) { (remote, others) throws(Mirrors.Failure) -> String in
            tried.append(remote.base)
            #expect(others.count == 2 && !others.contains { $0.base == remote.base })
            if remote.base == "http://a.example" { throw Mirrors.Failure(.remote("down")) }
            if remote.base == "http://b.example" { throw Mirrors.Failure(.integrity("bad signature")) }
            return remote.base
        }
        #expect(answer == "http://c.example" && tried.count == 3)
    }

    @Test func aFinalFailureOrAnotherKindStopsTheLoop() {
        for failure in [Mirrors.Failure(.remote("past the table"), final: true), Mirrors.Failure(.storage("disk full"))] {
            var tried = 0
            #expect(throws: CenariusError.self) {
                try Mirrors.first(remotes) { (_, _) throws(Mirrors.Failure) -> Int in
                    tried += 1
                    throw failure
                }
            }
            #expect(tried == 1, "\(failure.error.message)")
        }
    }

    @Test func whenEveryMirrorFailsTheErrorNamesThemAllWithTheFirstCode() {
        do {
            _ = try Mirrors.first(remotes) { (remote, _) throws(Mirrors.Failure) -> Int in
                throw Mirrors.Failure(remote.base == "http://a.example" ? .integrity("a refused") : .remote("\(remote.base) down"))
            }
            Issue.record("no error")
        } catch {
            #expect(error.code == .integrity)
            #expect(error.message.hasPrefix("every mirror failed: a refused; http://b.example down; http://c.example down"), "\(error.message)")
        }
    }
}

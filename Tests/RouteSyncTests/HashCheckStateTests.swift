@testable import RouteSync
@testable import Transport
import Testing

/// HashCheck's scheduling as values: when workers start, what a round takes, who is woken.
@Suite struct HashCheckStateTests {
    typealias State = HashCheck.State

    func item(loop: Int = 0, id: Int, _ algorithm: ContentHash.Algorithm = .md5) -> HashCheck.Pending {
        HashCheck.Pending(loop: loop, id: id, path: "/f\(id)", algorithm: algorithm, body: nil, reserved: 0)
    }

    func done(_ item: HashCheck.Pending) -> (item: HashCheck.Pending, done: HashCheck.Done) {
        (item, HashCheck.Done(id: item.id, actual: nil, size: 1, error: nil))
    }

    @Test func aWorkerStartsOnceAFullBatchWaitsAndASecondOnlyWhenAnotherDoes() {
        var state = State(loops: 1)
        for id in 0..<(HashCheck.batchMinimum - 1) { #expect(state.submit(item(id: id)).isEmpty) }
        let first = state.submit(item(id: 99))
        #expect(first.count == 1)
        let round = state.nextRound(for: first[0])
        #expect(round.batch?.files.count == HashCheck.batchMinimum)
        #expect(round.batch?.finish == false)
        for id in 100..<(100 + HashCheck.batchMinimum - 1) { #expect(state.submit(item(id: id)).isEmpty) }
        let second = state.submit(item(id: 200))
        #expect(second.count == 1 && second != first)
        #expect(state.idleHashers.isEmpty)
    }

    @Test func aLoopOnItsLastFilesGetsThemCheckedWithoutWaitingForABatch() {
        var state = State(loops: 2)
        #expect(state.submit(item(id: 1)).isEmpty)
        #expect(state.leave(loop: 0).isEmpty)  // loop 1 may still send many
        let start = state.collect(loop: 1, idle: false, tail: true).start
        #expect(start.count == 1)
        #expect(state.nextRound(for: start[0]).batch?.finish == true)
    }

    @Test func aRoundTakesOneAlgorithmAndAtMostTheBatchLimit() {
        var state = State(loops: 1)
        state.loopTail = [true]
        for id in 0..<(HashCheck.batchLimit + 5) { _ = state.submit(item(id: id)) }
        _ = state.submit(item(id: 1000, .sha256))
        #expect(state.idleHashers.isEmpty)  // hurrying with work waiting: every worker runs
        let round = state.nextRound(for: 0)
        #expect(round.batch?.files.count == HashCheck.batchLimit)
        #expect(round.batch?.files.allSatisfy { $0.algorithm == .md5 } == true)
        #expect(state.pending.count == 6)
    }

    @Test func bodiesLeftInTheLanesAreFinishedByTheirOwnHasherOnceTheLoopsHurry() {
        var state = State(loops: 1)
        state.idleHashers.removeAll { $0 == 0 }
        #expect(state.finish([], by: 0, holding: 3).isEmpty)
        #expect(state.nextRound(for: 0).batch == nil)  // not hurrying: the bodies can wait
        let start = state.leave(loop: 0)
        #expect(start == [0])
        let round = state.nextRound(for: 0)
        #expect(round.batch?.files.isEmpty == true)
        #expect(round.batch?.finish == true)
    }

    @Test func resultsReachTheirLoopAndWakeItOnlyWhenItWaitsForThem() {
        var state = State(loops: 2)
        _ = state.collect(loop: 1, idle: true, tail: false)
        let a = item(loop: 0, id: 1), b = item(loop: 1, id: 2), c = item(loop: 1, id: 3)
        #expect(state.finish([done(a), done(b), done(c)], by: 0, holding: 0) == [1])
        #expect(state.collect(loop: 0, idle: false, tail: false).done.map(\.id) == [1])
        #expect(state.collect(loop: 1, idle: false, tail: false).done.map(\.id) == [2, 3])
        #expect(state.collect(loop: 1, idle: false, tail: false).done.isEmpty)
    }

    @Test func aClosedCheckStartsNothingAndKeepsNoResults() {
        var state = State(loops: 1)
        state.closed = true
        state.loopTail = [true]
        #expect(state.submit(item(id: 1)).isEmpty)
        #expect(state.nextRound(for: 0).batch == nil)
        #expect(state.finish([done(item(id: 1))], by: 0, holding: 0).isEmpty)
        #expect(state.done[0].isEmpty)
    }
}

import RouteSync
extension HashCheck {
    /// What waits to be checked, which results wait for their loops, and which workers should
    /// run: HashCheck's decisions without its threads and locks, so that they can be tested as
    /// values (HashCheckStateTests). HashCheck holds one under a mutex and acts on what each
    /// call returns: workers to start, loops to wake.
    struct State {
        var pending: [Pending] = []
        /// Per loop.
        var done: [[Done]]
        /// Hashers not in use by a worker (indexes into `slots`); a worker holds one while it runs.
        var idleHashers = Array(0..<HashCheck.maxWorkers)
        /// Per hasher: bodies its lanes hold from an earlier round.
        var carried = Array(repeating: 0, count: HashCheck.maxWorkers)
        var closed = false
        /// Per loop: it has nothing but checks to wait for, so its next result must wake it.
        /// Otherwise it is woken by its own sockets soon enough, and a wakeup per result would
        /// only add context switches on a machine whose cores are all busy.
        var loopIdle: [Bool]
        /// Per loop: it has started its last transfers, is idle or has finished, so few or no
        /// more files are coming from it.
        var loopTail: [Bool]

        init(loops: Int) {
            done = Array(repeating: [], count: loops)
            loopIdle = Array(repeating: false, count: loops)
            loopTail = Array(repeating: false, count: loops)
        }

        /// No loop will send many more files soon: check what there is rather than wait for a fuller batch.
        var hurry: Bool { !loopTail.contains(false) }

        /// Whether `hasher` should run a round now: a full batch waits, or the loops are hurrying
        /// and there is something to check or to finish.
        func roundIsDue(for hasher: Int) -> Bool {
            pending.count >= HashCheck.batchMinimum || (hurry && (!pending.isEmpty || carried[hasher] > 0))
        }

        /// A finished file to check; the hashers whose workers should start.
        mutating func submit(_ item: Pending) -> [Int] {
            pending.append(item)
            return claimWorkers()
        }

        /// Hashers whose workers should start now. New files need one worker (a second starts when a
        /// full batch waits while the first is busy). Once the loops hurry, every hasher whose lanes
        /// carry bodies starts as well: only it can finish them, and the last files wait on both.
        mutating func claimWorkers() -> [Int] {
            guard !closed else { return [] }
            var claimed = hurry ? idleHashers.filter { carried[$0] > 0 } : []
            if claimed.isEmpty, let hasher = idleHashers.last(where: roundIsDue(for:)) { claimed = [hasher] }
            idleHashers.removeAll(where: claimed.contains)
            return claimed
        }

        /// The next files for `hasher`'s worker to check, all of one algorithm (none when it only
        /// has bodies to finish), and whether to finish every body its lanes hold. nil when there is
        /// nothing to do (or too little to wait for): the worker stops and gives its hasher back,
        /// and `others` are hashers whose rounds are due now, whose workers should start.
        mutating func nextRound(for hasher: Int) -> (batch: (files: [Pending], finish: Bool)?, others: [Int]) {
            guard !closed, roundIsDue(for: hasher) else {
                idleHashers.append(hasher)
                return (nil, claimWorkers())
            }
            var batch: [Pending] = []
            var rest: [Pending] = []
            if let algorithm = pending.first?.algorithm {
                for item in pending {
                    if item.algorithm == algorithm && batch.count < batchLimit { batch.append(item) } else { rest.append(item) }
                }
            }
            pending = rest
            return ((batch, hurry), [])
        }

        /// A round's results, handed to their loops; `holding`: bodies the hasher's lanes still
        /// hold. The loops to wake: those idle until a result came.
        mutating func finish(_ results: [(item: Pending, done: Done)], by hasher: Int, holding: Int) -> [Int] {
            carried[hasher] = holding
            guard !closed else { return [] }
            var wake: [Int] = []
            for (item, done) in results {
                self.done[item.loop].append(done)
                if loopIdle[item.loop] {
                    loopIdle[item.loop] = false
                    wake.append(item.loop)
                }
            }
            return wake
        }

        /// A loop's results ready since its last call, and the workers to start.
        mutating func collect(loop: Int, idle: Bool, tail: Bool) -> (done: [Done], start: [Int]) {
            defer { done[loop].removeAll(keepingCapacity: true) }
            loopIdle[loop] = idle
            loopTail[loop] = idle || tail
            return (done[loop], claimWorkers())
        }

        /// A loop has finished; the workers to start.
        mutating func leave(loop: Int) -> [Int] {
            loopIdle[loop] = false
            loopTail[loop] = true
            return claimWorkers()
        }
    }
}

import Testing
@testable import RouteSync
@testable import Transport

@Suite struct RetryPolicyTests {
    let policy = RetryPolicy(attempts: 3, base: 0.5, cap: 4, maxRetryAfter: 30)

    @Test func permanentFailuresAreNotRetried() {
        #expect(policy.decide(.permanent(.remote("404")), attempt: 1, random: 0.5) == .giveUp(.remote("404")))
    }

    @Test func transientFailuresBackOffWithFullJitterUpToTheCap() {
        #expect(policy.decide(.transient(.remote("reset")), attempt: 1, random: 0.5) == .retry(after: 0.25))
        #expect(policy.decide(.transient(.remote("reset")), attempt: 2, random: 0.999) == .retry(after: 0.999))
        #expect(policy.backoff(attempt: 10, random: 1) == 4)
        #expect(policy.backoff(attempt: 3, random: 0) == 0)
    }

    /// A pack (FormPolicy.packs): attempts are spent only on resuming a body that broke off, and on a throttled origin.
    @Test func aResumesOnlyPolicyRetriesNothingElse() {
        var packs = policy
        packs.resumesOnly = true
        #expect(packs.decide(.transient(.remote("cut")), attempt: 1, random: 0.5, resumable: true) == .retry(after: 0.25))
        #expect(packs.decide(.transient(.integrity("hash mismatch")), attempt: 1, random: 0.5) == .giveUp(.integrity("hash mismatch")))
        #expect(packs.decide(.transient(.remote("HTTP 500")), attempt: 1, random: 0.5) == .giveUp(.remote("HTTP 500")))
        // A throttled origin is waited for, not answered with a request per file.
        #expect(packs.decide(.throttled("429", retryAfter: 1), attempt: 1, random: 0) == .retry(after: 1))
    }

    @Test func givesUpAfterTheLastAttemptKeepingTheCode() {
        guard case .giveUp(let error) = policy.decide(.transient(.integrity("hash mismatch")), attempt: 3, random: 0) else {
            Issue.record("retried past the last attempt")
            return
        }
        #expect(error.code == .integrity)
        #expect(error.message.contains("after 3 attempts"))
    }

    @Test func honoursRetryAfterWithinTheBound() {
        #expect(policy.decide(.throttled("429", retryAfter: 7), attempt: 1, random: 0) == .retry(after: 7))
        guard case .giveUp(let error) = policy.decide(.throttled("503", retryAfter: 120), attempt: 1, random: 0) else {
            Issue.record("waited past the bound")
            return
        }
        #expect(error.code == .remote)
    }

    @Test func parsesRetryAfterForms() {
        var headers = ResponseHeaders()
        "Retry-After: 12\r\n".utf8CString.withUnsafeBytes { headers.consume(UnsafeRawBufferPointer(rebasing: $0.dropLast())) }
        #expect(headers.retryAfter == 12)
        var dated = ResponseHeaders()
        "Retry-After: Wed, 21 Oct 2015 07:28:00 GMT\r\n".utf8CString.withUnsafeBytes { dated.consume(UnsafeRawBufferPointer(rebasing: $0.dropLast())) }
        #expect(dated.retryAfter == 0)
    }
}

@Suite struct RateGateTests {
    @Test func aRunAheadOfItsRateWaitsTheDifferenceAfterAQuarterSecondsBurst() {
        let gate = RateGate(bytesPerSecond: 1000, now: 100)
        #expect(gate.wait(now: 100) == 0)
        gate.add(250)
        #expect(gate.wait(now: 100) == 0)  // the burst
        gate.add(1000)
        #expect(gate.wait(now: 100) == 1)
        #expect(gate.wait(now: 100.5) == 0.5)
        #expect(gate.wait(now: 101.5) == 0)
    }
}

@Suite struct ErrorCauseTests {
    @Test func callersDecideOnTheCauseNeverOnTheWords() {
        #expect(CenariusError(.remote, "Routes.json.sig: gone", cause: .httpStatus(404)).isMissingRemoteFile)
        #expect(CenariusError(.remote, "x: cannot read file:///r/x", cause: .missingFile).isMissingRemoteFile)
        #expect(!CenariusError(.remote, "x: HTTP 404 from somewhere (only words)").isMissingRemoteFile)
        #expect(!CenariusError(.remote, "x: HTTP 403", cause: .httpStatus(403)).isMissingRemoteFile)
    }

    @Test func givingUpAfterRetriesKeepsTheCause() {
        let policy = RetryPolicy(attempts: 2, base: 0.5, cap: 4, maxRetryAfter: 30)
        let failure = CenariusError(.remote, "x: HTTP 502", cause: .httpStatus(502))
        guard case .giveUp(let error) = policy.decide(.transient(failure), attempt: 2, random: 0) else {
            Issue.record("expected to give up")
            return
        }
        #expect(error.cause == .httpStatus(502))
        #expect(error.message == "x: HTTP 502 (after 2 attempts)")
    }
}

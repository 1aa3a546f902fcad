import Testing

@testable import AdMediation

/// The waterfall mode of the decision engine (no bidders), driven with explicit instants (no tasks, no clock).
@Suite("Waterfall decisions", .timeLimit(.minutes(2)))
struct WaterfallStateMachineTests {
    let t0 = AdInstant.zero
    func ms(_ n: Int) -> AdInstant { t0 + .milliseconds(n) }

    func machine(
        _ count: Int, maxInFlight: Int = 4, timeoutMs: Int = 1000, floors: [Double?]? = nil, deadlineMs: Int = 5000
    ) -> DecisionEngine {
        let lines = (0..<count).map {
            WaterfallLine(
                network: "n", placement: "x\($0)", floorEcpm: floors?[$0], timeout: .milliseconds(timeoutMs))
        }
        return DecisionEngine(
            placement: PlacementConfiguration(
                format: .interstitial, lines: lines, maxInFlight: maxInFlight, deadline: .milliseconds(deadlineMs)),
            startedAt: t0)
    }

    func ad(_ id: String, ecpm: Double? = nil, expiresAt: AdInstant? = nil) -> LoadedAd {
        LoadedAd(
            networkID: "n", placement: "p", format: .interstitial, creative: AdCreative(id: id, kind: "image"),
            ecpm: ecpm, loadedAt: t0, expiresAt: expiresAt)
    }

    func started(_ actions: [DecisionEngine.Action]) -> [Int] {
        actions.compactMap { if case .start(let i) = $0 { i } else { nil } }
    }

    func cancelled(_ actions: [DecisionEngine.Action]) -> [Int] {
        actions.compactMap { if case .cancel(let i) = $0 { i } else { nil } }
    }

    func invalidated(_ actions: [DecisionEngine.Action]) -> [String] {
        actions.compactMap { if case .invalidate(let ad) = $0 { ad.creative.id } else { nil } }
    }

    func outcome(_ m: DecisionEngine, _ i: Int, at now: AdInstant) -> LineOutcome {
        m.trace(placement: "p", at: now).lines[i].outcome
    }

    @Test func parallelModeStartsLinesUpToTheInFlightBound() {
        var m = machine(4, maxInFlight: 2)
        #expect(started(m.begin(at: t0)) == [0, 1])
        #expect(started(m.answer(0, .success(.noFill(NoFill(reason: "x"))), at: ms(10))) == [2])
    }

    @Test func sequentialModeStartsOneLineAtATime() {
        var m = machine(3, maxInFlight: 1)
        #expect(started(m.begin(at: t0)) == [0])
        #expect(started(m.answer(0, .failure(AdError(.server(status: 500), "x")), at: ms(10))) == [1])
    }

    @Test func lowerLineFillingFirstWaitsForHigherLines() {
        var m = machine(3)
        _ = m.begin(at: t0)
        let actions = m.answer(1, .success(.filled(ad("b"))), at: ms(50))
        #expect(!m.isFinished)
        #expect(cancelled(actions) == [2], "the line below the fill can never win")
        _ = m.answer(0, .success(.noFill(NoFill(reason: "none"))), at: ms(120))
        #expect(m.isFinished)
        #expect(m.winnerIndex == 1)
        #expect(
            m.trace(placement: "p", at: ms(120)).duration
                == .milliseconds(120))
    }

    @Test func higherLineFillWinsOverAnEarlierLowerFill() {
        var m = machine(2)
        _ = m.begin(at: t0)
        _ = m.answer(1, .success(.filled(ad("low"))), at: ms(10))
        let actions = m.answer(0, .success(.filled(ad("high"))), at: ms(90))
        #expect(m.winner?.creative.id == "high")
        #expect(invalidated(actions) == ["low"])
        #expect(outcome(m, 1, at: ms(90)) == .skipped(.outranked))
    }

    @Test func lateAnswerAfterTimeoutIsDroppedAndInvalidated() {
        var m = machine(2, timeoutMs: 100)
        _ = m.begin(at: t0)
        let timeouts = m.advance(to: ms(100))
        #expect(cancelled(timeouts) == [0, 1])
        #expect(m.isFinished && m.winnerIndex == nil)
        let late = m.answer(0, .success(.filled(ad("late"))), at: ms(150))
        #expect(invalidated(late) == ["late"])
        #expect(m.winner == nil)
        #expect(outcome(m, 0, at: ms(150)) == .timeout)
    }

    @Test func lineTimeoutLetsTheNextFillWin() {
        var m = machine(2, timeoutMs: 300)
        _ = m.begin(at: t0)
        _ = m.answer(1, .success(.filled(ad("b"))), at: ms(20))
        _ = m.advance(to: ms(300))
        #expect(m.winnerIndex == 1)
        #expect(outcome(m, 0, at: ms(300)) == .timeout)
    }

    @Test func overallDeadlineEndsTheRequestAndSkipsUnstartedLines() {
        var m = machine(3, maxInFlight: 1, timeoutMs: 1000, deadlineMs: 400)
        _ = m.begin(at: t0)
        #expect(m.nextWakeUp == ms(400), "a line's deadline is capped by the request's deadline")
        _ = m.advance(to: ms(400))
        #expect(m.isFinished)
        #expect(outcome(m, 0, at: ms(400)) == .timeout)
        #expect(outcome(m, 2, at: ms(400)) == .skipped(.notReached))
    }

    @Test func fillBelowTheFloorCountsAsNoFill() {
        var m = machine(2, floors: [2.0, nil])
        _ = m.begin(at: t0)
        let actions = m.answer(0, .success(.filled(ad("cheap", ecpm: 1.5))), at: ms(10))
        #expect(invalidated(actions) == ["cheap"])
        #expect(outcome(m, 0, at: ms(10)) == .skipped(.belowFloor))
        _ = m.answer(1, .success(.filled(ad("ok", ecpm: 0.5))), at: ms(20))
        #expect(m.winner?.creative.id == "ok")
    }

    @Test func fillAtTheFloorPasses() {
        var m = machine(1, floors: [2.0])
        _ = m.begin(at: t0)
        _ = m.answer(0, .success(.filled(ad("exact", ecpm: 2.0))), at: ms(10))
        #expect(m.winner?.creative.id == "exact")
    }

    @Test func expiredFillIsNeverReturned() {
        var m = machine(1)
        _ = m.begin(at: t0)
        let actions = m.answer(0, .success(.filled(ad("stale", expiresAt: ms(5)))), at: ms(10))
        #expect(invalidated(actions) == ["stale"])
        #expect(m.isFinished && m.winner == nil)
        #expect(outcome(m, 0, at: ms(10)) == .skipped(.expired))
    }

    @Test func breakerRejectionSkipsTheLineAndStartsTheNext() {
        var m = machine(2, maxInFlight: 1)
        _ = m.begin(at: t0)
        let actions = m.skip(0, reason: .breakerOpen, at: t0)
        #expect(started(actions) == [1])
        #expect(outcome(m, 0, at: t0) == .skipped(.breakerOpen))
    }

    @Test func callerCancellationCancelsEveryRunningLine() {
        var m = machine(3, maxInFlight: 2)
        _ = m.begin(at: t0)
        let actions = m.callerCancelled(at: ms(30))
        #expect(cancelled(actions) == [0, 1])
        #expect(m.isFinished && m.winner == nil)
        #expect(outcome(m, 2, at: ms(30)) == .skipped(.notReached))
    }

    @Test func failuresAndTimeoutsFeedTheBreakerButNoFillIsASuccess() {
        var m = machine(3)
        _ = m.begin(at: t0)
        let events = [
            m.answer(0, .success(.noFill(NoFill(reason: "x"))), at: ms(1)),
            m.answer(1, .failure(AdError(.network, "x")), at: ms(2)),
            m.answer(2, .failure(AdError(.timeout, "x")), at: ms(3)),
        ].flatMap { $0 }.compactMap { if case .breaker(let i, let e) = $0 { "\(i):\(e)" } else { nil } }
        #expect(events == ["0:success", "1:failure", "2:failure"])
    }
}

@Suite("Circuit breaker", .timeLimit(.minutes(2)))
struct CircuitBreakerTests {
    @Test func opensAfterTheThresholdOfConsecutiveFailures() {
        var breaker = CircuitBreaker(threshold: 3, coolDown: .seconds(30))
        breaker.recordFailure(at: .zero, probe: false)
        breaker.recordFailure(at: .zero, probe: false)
        #expect(breaker.admit(at: .zero) == .allowed)
        breaker.recordFailure(at: .zero, probe: false)
        #expect(breaker.state == .open(until: .zero + .seconds(30)))
        #expect(breaker.admit(at: .zero + .seconds(29)) == .rejected)
    }

    @Test func successResetsTheFailureCount() {
        var breaker = CircuitBreaker(threshold: 2, coolDown: .seconds(30))
        breaker.recordFailure(at: .zero, probe: false)
        breaker.recordSuccess(probe: false)
        breaker.recordFailure(at: .zero, probe: false)
        #expect(breaker.state == .closed(failures: 1))
    }

    @Test func halfOpenAdmitsOneProbeAfterTheCoolDown() {
        var breaker = CircuitBreaker(threshold: 1, coolDown: .seconds(30))
        breaker.recordFailure(at: .zero, probe: false)
        #expect(breaker.admit(at: .zero + .seconds(30)) == .probe)
        #expect(breaker.admit(at: .zero + .seconds(30)) == .rejected, "only one probe at a time")
    }

    @Test func successfulProbeClosesTheBreaker() {
        var breaker = CircuitBreaker(threshold: 1, coolDown: .seconds(30))
        breaker.recordFailure(at: .zero, probe: false)
        _ = breaker.admit(at: .zero + .seconds(31))
        breaker.recordSuccess(probe: true)
        #expect(breaker.state == .closed(failures: 0))
        #expect(breaker.admit(at: .zero + .seconds(31)) == .allowed)
    }

    @Test func failedProbeReopensForAnotherCoolDown() {
        var breaker = CircuitBreaker(threshold: 1, coolDown: .seconds(30))
        breaker.recordFailure(at: .zero, probe: false)
        _ = breaker.admit(at: .zero + .seconds(31))
        breaker.recordFailure(at: .zero + .seconds(32), probe: true)
        #expect(breaker.state == .open(until: .zero + .seconds(62)))
    }

    @Test func abandonedProbeFreesTheProbeSlot() {
        var breaker = CircuitBreaker(threshold: 1, coolDown: .seconds(30))
        breaker.recordFailure(at: .zero, probe: false)
        _ = breaker.admit(at: .zero + .seconds(31))
        breaker.recordAbandoned(probe: true)
        #expect(breaker.admit(at: .zero + .seconds(31)) == .probe)
    }

    @Test func staleAnswersOfRequestsAdmittedBeforeTheBreakerOpenedDoNotAdmitASecondProbe() {
        var breaker = CircuitBreaker(threshold: 1, coolDown: .seconds(30))
        #expect(breaker.admit(at: .zero) == .allowed)  // two requests in flight while closed
        #expect(breaker.admit(at: .zero) == .allowed)
        breaker.recordFailure(at: .zero, probe: false)  // the first fails: open
        #expect(breaker.admit(at: .zero + .seconds(30)) == .probe)
        breaker.recordAbandoned(probe: false)  // the second, admitted while closed, is cancelled
        #expect(breaker.admit(at: .zero + .seconds(30)) == .rejected, "the probe is still running")
        breaker.recordSuccess(probe: false)  // a stale success does not close the breaker either
        #expect(breaker.state == .halfOpen(probing: true))
    }

    @Test func staleFailureWhileOpenDoesNotExtendTheCoolDown() {
        var breaker = CircuitBreaker(threshold: 1, coolDown: .seconds(30))
        breaker.recordFailure(at: .zero, probe: false)
        breaker.recordFailure(at: .zero + .seconds(20), probe: false)
        #expect(breaker.state == .open(until: .zero + .seconds(30)))
    }
}

import AdMediationTesting
import AdNetworkConformance
import Foundation
import TestSupport
import Testing

@testable import AdMediation

@Suite("Mediator", .timeLimit(.minutes(2)))
struct MediatorTests {
    @Test func priorityHoldsWhenALowerLineAnswersFirst() async throws {
        let a = GateNetwork(id: "a"), b = GateNetwork(id: "b")
        let mediator = try Mediator(
            networks: [a, b],
            configuration: .init(placements: [
                "p": placement([.init(network: "a", placement: "a1"), .init(network: "b", placement: "b1")])
            ]), clock: ManualAdClock())  // a clock nobody advances: on a loaded machine no line may time out
        let task = Task { await mediator.loadWithTrace(interstitial) }
        await a.waitForLoads()
        await b.waitForLoads()
        b.answer(.success(.filled(b.fill("from-b"))))
        a.answer(.success(.filled(a.fill("from-a"))))
        let outcome = await task.value
        #expect(try outcome.result.get().ad?.creative.id == "from-a")
        #expect(outcome.trace.winnerIndex == 0)
    }

    @Test func lowerLineWinsOnceEveryHigherLineHasNoFill() async throws {
        let a = GateNetwork(id: "a"), b = GateNetwork(id: "b")
        let mediator = try Mediator(
            networks: [a, b],
            configuration: .init(placements: [
                "p": placement([.init(network: "a", placement: "a1"), .init(network: "b", placement: "b1")])
            ]), clock: ManualAdClock())  // a clock nobody advances: on a loaded machine no line may time out
        let task = Task { await mediator.loadWithTrace(interstitial) }
        await a.waitForLoads()
        await b.waitForLoads()
        b.answer(.success(.filled(b.fill("from-b"))))
        a.answer(.success(.noFill(NoFill(reason: "empty"))))
        let outcome = await task.value
        let ad = try #require(try outcome.result.get().ad)
        #expect(ad.creative.id == "from-b")
        #expect(ad.networkID == "b")
        #expect(outcome.trace.lines.map(\.outcome.name) == ["no_fill", "fill"])
    }

    @Test func lateAnswerOfACancelledLineIsInvalidatedNotDelivered() async throws {
        let a = GateNetwork(id: "a"), b = GateNetwork(id: "b")
        let mediator = try Mediator(
            networks: [a, b],
            configuration: .init(placements: [
                "p": placement([.init(network: "a", placement: "a1"), .init(network: "b", placement: "b1")])
            ]), clock: ManualAdClock())  // a clock nobody advances: on a loaded machine no line may time out
        let task = Task { await mediator.loadWithTrace(interstitial) }
        await a.waitForLoads()
        await b.waitForLoads()
        a.answer(.success(.filled(a.fill("winner"))))
        await until { b.cancellations == 1 }  // a won, so b is cancelled...
        let late = b.fill("late")
        b.answer(.success(.filled(late)))  // ...but b ignores the cancellation and answers anyway
        let outcome = await task.value
        await mediator.shutdown()  // the late answer is read in the background: wait for it
        #expect(outcome.trace.lines[1].outcome == .skipped(.cancelled))
        #expect(late.isInvalidated)
        #expect(try outcome.result.get().ad?.creative.id == "winner")
    }

    @Test func linesRunWithTheCallersTaskLocalValues() async throws {
        let network = TaskLocalReadingNetwork(id: "n")
        let mediator = try Mediator(
            networks: [network],
            configuration: .init(placements: [
                "p": placement([.init(network: "n", placement: "x")])
            ]))
        _ = await RequestTag.$value.withValue("checkout") { await mediator.loadWithTrace(interstitial) }
        #expect(network.seen == ["checkout"])
    }

    @Test func linesRunAtTheCallersPriority() async throws {
        let network = TaskLocalReadingNetwork(id: "n")
        let mediator = try Mediator(
            networks: [network],
            configuration: .init(placements: [
                "p": placement([.init(network: "n", placement: "x")])
            ]))
        // Awaiting the task's value would raise its priority, so the test waits for the network instead.
        let task = Task(priority: .background) { _ = await mediator.loadWithTrace(interstitial) }
        await until { network.priorities.count == 1 }
        #expect(network.priorities == [.background])
        await task.value
    }

    @Test func halfOpenBreakerAdmitsExactlyOneProbeAmongFiftyConcurrentRequests() async throws {
        let clock = ManualAdClock()
        let gate = GateNetwork(id: "g")
        var configuration = MediationConfiguration(placements: ["p": placement([.init(network: "g", placement: "x")])])
        configuration.circuitBreaker = .init(failureThreshold: 1, coolDown: .seconds(30))
        let mediator = try Mediator(networks: [gate], configuration: configuration, clock: clock)
        let first = Task { await mediator.loadWithTrace(interstitial) }
        await gate.waitForLoads()
        gate.answer(.failure(AdError(.server(status: 500), "down")))
        _ = await first.value
        #expect(mediator.breakerState(of: "g") == .open(until: .zero + .seconds(30)))
        await clock.advance(by: .seconds(30))
        let answered = AnswerCount()
        let requests = (0..<50).map { _ in
            Task {
                let outcome = await mediator.loadWithTrace(interstitial)
                answered.add()
                return outcome
            }
        }
        // 49 requests are answered without reaching the network; the one probe waits at the gate.
        await until { answered.value == 49 && gate.waiting == 1 }
        #expect(gate.waiting == 1, "exactly one probe reaches the network")
        gate.answer(.success(.noFill(NoFill(reason: "back"))))
        var outcomes: [String] = []
        for request in requests { outcomes.append((await request.value).trace.lines[0].outcome.name) }
        #expect(outcomes.count(where: { $0 == "no_fill" }) == 1)
        #expect(outcomes.count(where: { $0 == "skipped" }) == 49)
        #expect(mediator.breakerState(of: "g") == .closed(failures: 0))
    }

    @Test func lineTimeoutOnTheManualClockLetsTheNextLineWin() async throws {
        let clock = ManualAdClock()
        let slow = ScriptedAdNetwork(id: "slow", clock: clock, script: ["s": [.fill(ecpm: 5, latency: .seconds(2))]])
        let fast = ScriptedAdNetwork(
            id: "fast", clock: clock, script: ["f": [.fill(ecpm: 1, latency: .milliseconds(50))]])
        let mediator = try Mediator(
            networks: [slow, fast],
            configuration: .init(placements: [
                "p": placement([
                    .init(network: "slow", placement: "s", timeout: .milliseconds(300)),
                    .init(network: "fast", placement: "f"),
                ])
            ]), clock: clock)
        let task = Task { await mediator.loadWithTrace(interstitial) }
        await clock.waitForSleepers(3)  // two lines and the mediator's timer
        await clock.advance(by: .milliseconds(50))
        await until { fast.loadCount == 1 }
        await clock.advance(to: .zero + .milliseconds(300))
        let outcome = await task.value
        #expect(try outcome.result.get().ad?.networkID == "fast")
        #expect(outcome.trace.lines[0].outcome == .timeout)
        #expect(outcome.trace.duration == .milliseconds(300))
    }

    @Test func parallelDecisionTakesTheSlowestLineAboveTheWinnerNotTheSum() async throws {
        let clock = ManualAdClock()
        let networks = (0..<3).map { i in
            ScriptedAdNetwork(
                id: "n\(i)", clock: clock,
                script: [
                    "x": [i < 2 ? .noFill(latency: .milliseconds(100 * (i + 1))) : .fill(latency: .milliseconds(50))]
                ])
        }
        let mediator = try Mediator(
            networks: networks,
            configuration: .init(placements: [
                "p": placement((0..<3).map { .init(network: "n\($0)", placement: "x") })
            ]), clock: clock)
        let task = Task { await mediator.loadWithTrace(interstitial) }
        await clock.waitForSleepers(4)
        await clock.advance(to: .zero + .milliseconds(200))
        let outcome = await task.value
        #expect(outcome.trace.winnerIndex == 2)
        #expect(outcome.trace.duration == .milliseconds(200), "max(100, 200), not 100 + 200 + 50")
    }

    @Test func sequentialModeAsksOneLineAfterAnother() async throws {
        let a = GateNetwork(id: "a"), b = GateNetwork(id: "b")
        let mediator = try Mediator(
            networks: [a, b],
            configuration: .init(placements: [
                "p": placement(
                    [.init(network: "a", placement: "a1"), .init(network: "b", placement: "b1")], mode: .sequential)
            ]), clock: ManualAdClock())  // a clock nobody advances: on a loaded machine no line may time out
        let task = Task { await mediator.loadWithTrace(interstitial) }
        await a.waitForLoads()
        #expect(b.waiting == 0, "b must not start before a answered")
        a.answer(.failure(AdError(.server(status: 500), "boom")))
        await b.waitForLoads()
        b.answer(.success(.filled(b.fill("b"))))
        let outcome = await task.value
        #expect(try outcome.result.get().ad?.creative.id == "b")
        #expect(outcome.trace.lines[0].outcome == .error(AdError(.server(status: 500), "boom")))
    }

    @Test func overallDeadlineFromTheRequestEndsTheWaterfall() async throws {
        let clock = ManualAdClock()
        let hang = ScriptedAdNetwork(id: "hang", clock: clock, fallback: .hang)
        let mediator = try Mediator(
            networks: [hang],
            configuration: .init(placements: [
                "p": placement([.init(network: "hang", placement: "h", timeout: .milliseconds(10_000))])
            ]), clock: clock)
        var request = interstitial
        request.timeout = .milliseconds(250)
        let task = Task { await mediator.loadWithTrace(request) }
        await clock.waitForSleepers(2)
        await clock.advance(by: .milliseconds(250))
        let outcome = await task.value
        if case .failure(let error) = outcome.result {
            #expect(error.code == .timeout)
        } else {
            Issue.record("expected a timeout error")
        }
        #expect(outcome.trace.lines[0].outcome == .timeout)
        #expect(outcome.trace.duration == .milliseconds(250))
    }

    @Test func callerCancellationCancelsEveryLine() async throws {
        let clock = ManualAdClock()
        let a = ScriptedAdNetwork(id: "a", clock: clock, fallback: .hang)
        let b = ScriptedAdNetwork(id: "b", clock: clock, fallback: .hang)
        let mediator = try Mediator(
            networks: [a, b],
            configuration: .init(placements: [
                "p": placement([.init(network: "a", placement: "x"), .init(network: "b", placement: "x")])
            ]), clock: clock)
        let task = Task { await mediator.loadWithTrace(interstitial) }
        await until { a.loadCount == 1 && b.loadCount == 1 }
        task.cancel()
        let outcome = await task.value
        #expect(throws: AdError.self) { try outcome.result.get() }
        #expect((try? outcome.result.get()) == nil)
        if case .failure(let error) = outcome.result { #expect(error.code == .cancelled) }
        await until { a.cancellationCount == 1 && b.cancellationCount == 1 }
        #expect(outcome.trace.lines.map(\.outcome) == [.skipped(.cancelled), .skipped(.cancelled)])
    }

    @Test func frequencyCapTurnsRequestsIntoNoFillUntilTheWindowPasses() async throws {
        let clock = ManualAdClock()
        let net = ScriptedAdNetwork(id: "n", clock: clock, fallback: .fill(ecpm: 1))
        let mediator = try Mediator(
            networks: [net],
            configuration: .init(placements: [
                "p": PlacementConfiguration(
                    format: .interstitial, lines: [.init(network: "n", placement: "x")], frequencyCap: 2,
                    frequencyWindow: .seconds(60))
            ]), clock: clock)
        for _ in 0..<2 {
            let ad = try #require(try await mediator.load(interstitial).ad)
            try await ad.report(.impression)
        }
        let capped = await mediator.loadWithTrace(interstitial)
        #expect(try capped.result.get().ad == nil)
        #expect(capped.trace.lines[0].outcome == .skipped(.capped))
        #expect(net.loadCount == 2, "a capped request never reaches the network")
        await clock.advance(by: .seconds(60))
        #expect(try await mediator.load(interstitial).ad != nil)
    }

    @Test func pacingEnforcesAMinimumIntervalBetweenImpressions() async throws {
        let clock = ManualAdClock()
        let net = ScriptedAdNetwork(id: "n", clock: clock, fallback: .fill())
        let mediator = try Mediator(
            networks: [net],
            configuration: .init(placements: [
                "p": placement([.init(network: "n", placement: "x")], minInterval: .seconds(30))
            ]), clock: clock)
        let ad = try #require(try await mediator.load(interstitial).ad)
        try await ad.report(.impression)
        await clock.advance(by: .seconds(10))
        let paced = await mediator.loadWithTrace(interstitial)
        #expect(paced.trace.lines[0].outcome == .skipped(.paced))
        await clock.advance(by: .seconds(20))
        #expect(try await mediator.load(interstitial).ad != nil)
    }

    @Test func breakerOpensAfterConsecutiveFailuresAndProbesAfterTheCoolDown() async throws {
        let clock = ManualAdClock()
        let flaky = ScriptedAdNetwork(
            id: "flaky", clock: clock,
            script: [
                "x": [
                    .fail(AdError(.server(status: 503), "down")), .fail(AdError(.server(status: 503), "down")), .fill(),
                ]
            ])
        let mediator = try Mediator(
            networks: [flaky],
            configuration: .init(
                placements: ["p": placement([.init(network: "flaky", placement: "x")])],
                circuitBreaker: .init(failureThreshold: 2, coolDown: .seconds(30))), clock: clock)
        _ = try await mediator.load(interstitial)
        _ = try await mediator.load(interstitial)
        let rested = await mediator.loadWithTrace(interstitial)
        #expect(rested.trace.lines[0].outcome == .skipped(.breakerOpen))
        #expect(flaky.loadCount == 2)
        await clock.advance(by: .seconds(30))
        let probe = await mediator.loadWithTrace(interstitial)
        #expect(probe.trace.lines[0].outcome == .fill)
        #expect(mediator.breakerState(of: "flaky") == .closed(failures: 0))
    }

    @Test func noFillDoesNotTripTheBreaker() async throws {
        let net = ScriptedAdNetwork(id: "n", fallback: .noFill())
        let mediator = try Mediator(
            networks: [net],
            configuration: .init(
                // Not about time: a deadline no busy machine reaches.
                placements: ["p": placement([.init(network: "n", placement: "x")], deadline: .seconds(60))],
                circuitBreaker: .init(failureThreshold: 1)))
        for _ in 0..<3 { _ = try await mediator.load(interstitial) }
        #expect(net.loadCount == 3)
        #expect(mediator.breakerState(of: "n") == .closed(failures: 0))
    }

    /// Not about time: the line timeouts are long enough that a busy machine cannot reach them.
    @Test func mediatorsNest() async throws {
        let a = ScriptedAdNetwork(id: "a", fallback: .noFill())
        let b = ScriptedAdNetwork(id: "b", fallback: .fill(ecpm: 3))
        let inner = try Mediator(
            id: "inner", networks: [b],
            configuration: .init(placements: [
                "inner_p": placement(
                    [.init(network: "b", placement: "b1", timeout: .milliseconds(30_000))], deadline: .seconds(60))
            ]))
        let outer = try Mediator(
            networks: [a, inner],
            configuration: .init(placements: [
                "p": placement(
                    [
                        .init(network: "a", placement: "a1", timeout: .milliseconds(30_000)),
                        .init(network: "inner", placement: "inner_p", timeout: .milliseconds(30_000)),
                    ], deadline: .seconds(60))
            ]))
        let outcome = await outer.loadWithTrace(interstitial)
        let ad = try #require(try outcome.result.get().ad, "\(outcome.trace)")
        #expect(ad.networkID == "b")
        #expect(ad.ecpm == 3)
        #expect(outcome.trace.winner?.network == "inner")
        try await ad.report(.impression)
        #expect(b.reportedEvents.map(\.event) == [.impression], "events reach the innermost network")
    }

    @Test func privacySignalsAndUserReachEachLine() async throws {
        let net = ScriptedAdNetwork(id: "n", fallback: .fill())
        let mediator = try Mediator(
            networks: [net], configuration: .init(placements: ["p": placement([.init(network: "n", placement: "x")])]))
        var request = interstitial
        // Everything consented (purposes 1…10, special feature 1), so the privacy rules strip nothing.
        var tcf = TCFTestString()
        tcf.purposeConsents = Set(1...10)
        tcf.specialFeatureOptIns = [1]
        request.privacy = PrivacySignals(gdprApplies: true, tcfConsent: tcf.encoded, usPrivacy: "1YNN")
        request.userID = "u1"
        _ = try await mediator.load(request)
        var expected = request.privacy
        expected.permissions = .all
        #expect(net.requests.first?.privacy == expected)
        #expect(net.requests.first?.userID == "u1")
        #expect(net.requests.first?.placement == "x")
    }

    @Test func unknownPlacementIsAConfigurationError() async throws {
        let mediator = try Mediator(
            networks: [ScriptedAdNetwork(id: "n")],
            configuration: .init(placements: ["p": placement([.init(network: "n", placement: "x")])]))
        await #expect(throws: AdError(.configuration, "unknown placement \"nope\"")) {
            try await mediator.load(AdRequest(placement: "nope", format: .interstitial))
        }
    }

    @Test func mediatorPassesTheConformanceKit() async throws {
        let net = ScriptedAdNetwork(
            id: "n",
            script: [
                "fill": [.fill(ecpm: 2)], "empty": [.noFill()], "broken": [.fail(AdError(.unauthorized, "bad key"))],
                "slow": [.fill(latency: .seconds(5))],
            ])
        let lines = ["fill", "empty", "broken", "slow"].map {
            ($0, placement([.init(network: "n", placement: $0, timeout: .milliseconds(10_000))]))
        }
        let mediator = try Mediator(
            networks: [net], configuration: .init(placements: Dictionary(uniqueKeysWithValues: lines)))
        let subject = ConformanceSubject(
            network: mediator, wire: net,
            fillRequest: AdRequest(placement: "fill", format: .interstitial),
            noFillRequest: AdRequest(placement: "empty", format: .interstitial),
            slowRequest: AdRequest(placement: "slow", format: .interstitial))
        let results = await AdNetworkConformance.runAll(subject)
        for result in results {
            if case .failed(let failure) = result.status { Issue.record("\(failure)") }
        }
        #expect(
            results.filter { $0.status == .passed }.count == AdNetworkConformance.resultCount - 1,
            "all but the error scenario (a mediator turns line errors into no fill)")
    }

    @Test func timerTicksRacingAnswersNeverLeaveTwoTimers() async throws {
        let clock = ManualAdClock()
        let gates = (0..<3).map { GateNetwork(id: "g\($0)", honoursCancellation: true) }
        let mediator = try Mediator(
            networks: gates,
            configuration: .init(
                placements: [
                    "p": placement(
                        (0..<3).map {
                            .init(network: "g\($0)", placement: "x", timeout: .milliseconds(100 * ($0 + 1)))
                        },
                        deadline: .milliseconds(10_000))
                ],
                circuitBreaker: .init(failureThreshold: 1000)), clock: clock)
        for round in 0..<20 {
            let start = clock.now
            let task = Task { await mediator.loadWithTrace(interstitial) }
            for gate in gates { await gate.waitForLoads() }
            await clock.waitForSleepers(1)
            // The first line answers exactly when its timer fires: the tick and the answer race.
            async let advanced: Void = clock.advance(to: start + .milliseconds(100))
            gates[0].answer(.success(.noFill(NoFill(reason: "empty"))))
            await advanced
            await until { clock.sleeperCount >= 1 }
            for _ in 0..<50 { await Task.yield() }
            #expect(clock.sleeperCount == 1, "round \(round): one timer, for the next line's timeout")
            await clock.advance(to: start + .milliseconds(200))
            await clock.advance(to: start + .milliseconds(300))
            let outcome = await task.value
            #expect(outcome.trace.lines.dropFirst().map(\.outcome) == [.timeout, .timeout], "round \(round)")
            #expect(clock.sleeperCount == 0, "round \(round): no timer outlives the request")
            #expect(gates.map(\.waiting) == [0, 0, 0], "round \(round): every timed-out line was cancelled")
        }
    }
}

/// Counts answers from many tasks.
final class AnswerCount: Sendable {
    private let count = LockedValue(0)
    func add() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}

// 720 loads and 360 clock steps, each settled on the real scheduler: the limit is a hang guard (60 s was exceeded
// with the suite, two CPU hogs and another build beside it), the rule is the outcome.
@Suite("Mediator bounds over an hour", .timeLimit(.minutes(3)))
struct MediatorBoundsTests {
    @Test func pacingKeepsOnlyTheImpressionsADecisionNeeds() async throws {
        let clock = ManualAdClock()
        let network = ScriptedAdNetwork(id: "n", clock: clock, fallback: .fill(ecpm: 1, latency: .zero))
        let mediator = try Mediator(
            networks: [network],
            configuration: .init(placements: [
                "uncapped": placement([.init(network: "n", placement: "x")], minInterval: .seconds(5)),
                "capped": placement([.init(network: "n", placement: "x")], frequencyCap: 40),
            ]), clock: clock)
        // An impression every 10 simulated seconds for an hour, on each placement (100 users share a placement).
        for _ in 0..<360 {
            for name in ["uncapped", "capped"] {
                if let ad = try await mediator.load(AdRequest(placement: name, format: .interstitial)).ad {
                    try await ad.report(.impression)
                }
            }
            await clock.advance(by: .seconds(10))
        }
        #expect(mediator.pacedImpressionCount(of: "uncapped") == 1, "the minimum interval needs only the last")
        #expect(mediator.pacedImpressionCount(of: "capped") == 40, "a cap of 40 needs only the 40 newest")
    }
}

import AdMediation
import AdMediationTesting
import AdNetworkConformance
import InMemoryTracing
import Logging
import MetricsTestKit
import TestSupport
import Testing

@Suite("Mediator logs and metrics", .timeLimit(.minutes(1)))
struct ObservabilityTests {
    /// Line a fails with a 503, line b fills: one decision.
    func scriptedDecision(logger: Logger, metrics: TestMetrics, tracer: InMemoryTracer = InMemoryTracer()) async throws
        -> MediationOutcome
    {
        let clock = ManualAdClock()
        let a = ScriptedAdNetwork(
            id: "a", clock: clock, fallback: .fail(AdError(.server(status: 503), "down"), latency: .milliseconds(20)))
        let b = ScriptedAdNetwork(id: "b", clock: clock, fallback: .fill(ecpm: 2, latency: .milliseconds(30)))
        let mediator = try Mediator(
            networks: [a, b],
            configuration: .init(placements: [
                "p": placement([.init(network: "a", placement: "a1"), .init(network: "b", placement: "b1")])
            ]), clock: clock, logger: logger, metrics: metrics, tracer: tracer)
        let task = Task { await mediator.loadWithTrace(interstitial) }
        await clock.waitForSleepers(3)
        await clock.advance(by: .milliseconds(30))
        return await task.value
    }

    @Test func aDecisionIsCountedByPlacementNetworkAndCode() async throws {
        let metrics = TestMetrics()
        _ = try await scriptedDecision(logger: LogCapture().logger(label: "admediation.mediator"), metrics: metrics)
        #expect(try metrics.expectCounter("admediation_requests_total", [("placement", "p")]).totalValue == 1)
        #expect(
            try metrics.expectCounter("admediation_fills_total", [("placement", "p"), ("network", "b")]).totalValue == 1
        )
        #expect(
            try metrics.expectCounter(
                "admediation_line_outcomes_total",
                [("placement", "p"), ("network", "a"), ("outcome", "error"), ("code", "server_503")]
            ).totalValue == 1)
        #expect(
            try metrics.expectCounter(
                "admediation_line_outcomes_total",
                [("placement", "p"), ("network", "b"), ("outcome", "fill"), ("code", "")]
            ).totalValue == 1)
        #expect(
            try metrics.expectTimer("admediation_line_latency", [("placement", "p"), ("network", "b")]).values == [
                30_000_000
            ])
        #expect(try metrics.expectTimer("admediation_decision_latency", [("placement", "p")]).values == [30_000_000])
        #expect(throws: (any Error).self) {
            try metrics.expectCounter("admediation_no_fills_total", [("placement", "p")])
        }
    }

    @Test func aDecisionLogsOneInfoRecordAndADebugRecordPerLine() async throws {
        let capture = LogCapture()
        _ = try await scriptedDecision(logger: capture.logger(label: "admediation.mediator"), metrics: TestMetrics())
        let info = capture.all.filter { $0.level == .info }
        #expect(info.map(\.message) == ["filled"])
        #expect(info.first?.metadata["network"] == "b" && info.first?.metadata["placement"] == "p")
        let lines = capture.all.filter { $0.level == .debug }
        #expect(lines.map { $0.metadata["network"] } == ["a", "b"])
        #expect(lines.first?.metadata["code"] == "server_503")
    }

    @Test func atInfoLevelNoLineIsLogged() async throws {
        let capture = LogCapture()
        _ = try await scriptedDecision(
            logger: capture.logger(label: "admediation.mediator", level: .info), metrics: TestMetrics())
        #expect(capture.all.allSatisfy { $0.level >= .info })
        #expect(capture.all.count == 1)
    }

    @Test func anOpeningBreakerIsAWarningAndCounted() async throws {
        let clock = ManualAdClock()
        let capture = LogCapture(), metrics = TestMetrics()
        let failing = ScriptedAdNetwork(
            id: "f", clock: clock, fallback: .fail(AdError(.server(status: 500), "boom"), latency: .zero))
        var configuration = MediationConfiguration(placements: ["p": placement([.init(network: "f", placement: "x")])])
        configuration.circuitBreaker = .init(failureThreshold: 1, coolDown: .seconds(30))
        let mediator = try Mediator(
            networks: [failing], configuration: configuration, clock: clock,
            logger: capture.logger(label: "admediation.mediator"), metrics: metrics)
        _ = await mediator.loadWithTrace(interstitial)
        #expect(capture.all.filter { $0.level == .warning }.map(\.message) == ["circuit breaker opened"])
        #expect(
            try metrics.expectCounter("admediation_breaker_transitions_total", [("network", "f"), ("state", "open")])
                .totalValue == 1)
    }

    @Test func aDecisionIsOneSpanWithAChildSpanPerLineThatAgreesWithTheTrace() async throws {
        let tracer = InMemoryTracer()
        let outcome = try await scriptedDecision(
            logger: LogCapture().logger(label: "admediation.mediator"), metrics: TestMetrics(), tracer: tracer)
        let spans = tracer.finishedSpans
        let mediation = try #require(spans.first { $0.operationName == "mediation" })
        let lines = spans.filter { $0.operationName == "ad line" }
        #expect(spans.count == 3 && lines.count == 2)
        #expect(
            lines.allSatisfy { $0.parentSpanID == mediation.spanID && $0.traceID == mediation.traceID },
            "the lines are children of the decision")
        func network(_ span: FinishedInMemorySpan) -> String {
            if case .string(let id)? = span.attributes["admediation.network"]?.toSpanAttribute() { return id }
            return ""
        }
        let byNetwork = Dictionary(uniqueKeysWithValues: lines.map { (network($0), $0) })
        #expect(Set(byNetwork.keys) == ["a", "b"])
        #expect(byNetwork["a"]?.attributes["admediation.outcome"]?.toSpanAttribute() == .string("error"))
        #expect(byNetwork["a"]?.attributes["admediation.code"]?.toSpanAttribute() == .string("server_503"))
        #expect(byNetwork["b"]?.attributes["admediation.outcome"]?.toSpanAttribute() == .string("fill"))
        #expect(byNetwork["b"]?.attributes["admediation.ecpm"]?.toSpanAttribute() == .double(2))
        #expect(mediation.attributes["admediation.outcome"]?.toSpanAttribute() == .string("filled"))
        #expect(
            mediation.attributes["admediation.network"]?.toSpanAttribute()
                == .string(outcome.trace.winner?.network ?? "?"))
        #expect(mediation.attributes["admediation.lines"]?.toSpanAttribute() == .string("a:error:server_503,b:fill"))
    }
}

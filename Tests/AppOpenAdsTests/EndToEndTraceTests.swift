import AdMediation
import AppOpenAds
import CurlTransport
import DemandSandbox
import InMemoryTracing
import Logging
import TestSupport
import Testing
import Tracing

@Suite("One trace from the mediator to the wire", .timeLimit(.minutes(1)))
struct EndToEndTraceTests {
    @Test func eachLinesHTTPRequestIsAChildOfItsAdLineSpanInTheMediationTrace() async throws {
        let sandbox = try await DemandSandbox.start(
            scenario: SandboxScenario(networks: ["appopen": NetworkScenario(fillRate: 1)]))
        let tracer = InMemoryTracer()
        let curl = CurlHTTPClient(tracer: tracer)
        let appOpen = AppOpenNetwork(configuration: .init(baseURL: sandbox.appOpenBaseURL), http: curl)
        let mediator = try Mediator(
            networks: [appOpen],
            configuration: .init(placements: [
                "launch": PlacementConfiguration(
                    format: .appOpen,
                    lines: [
                        WaterfallLine(
                            network: "appopen", placement: AppOpenNetwork.testAdUnitID, timeout: .milliseconds(5000))
                    ],
                    deadline: .milliseconds(10_000))
            ]), logger: LogCapture().logger(label: "admediation.mediator"), tracer: tracer)
        let outcome = await mediator.loadWithTrace(AdRequest(placement: "launch", format: .appOpen))
        await curl.shutdown()
        await sandbox.shutdown()
        #expect(outcome.trace.winnerIndex == 0, "\(outcome.trace.lines)")
        let spans = tracer.finishedSpans
        let mediation = try #require(spans.first { $0.operationName == "mediation" })
        let line = try #require(spans.first { $0.operationName == "ad line" })
        let http = spans.filter { $0.operationName.hasPrefix("HTTP ") }
        #expect(!http.isEmpty, "the line's request was traced")
        #expect(line.parentSpanID == mediation.spanID)
        #expect(
            http.allSatisfy { $0.parentSpanID == line.spanID && $0.traceID == mediation.traceID },
            "every request is a child of its line")
    }
}

import AdMediation
import AdMediationTesting
import AdNetworkConformance
import AdTransport
import Foundation
import Testing

/// A deliberately broken adapter: wraps a good scripted network and breaks one rule.
final class BrokenNetwork: AdNetwork, WireProbe {
    enum Fault: Sendable {
        case none, continuesAfterCompletion, throwsNoFill, ignoresCancellation, ignoresTimeout, dropsPrivacy,
            duplicateImpression, wrongErrorCode, firesImpressionOnLoad
    }

    let inner: ScriptedAdNetwork
    let fault: Fault
    private let extra = LockedValue<[String]>([])
    var id: String { inner.id }
    var capabilities: AdNetworkCapabilities { inner.capabilities }

    init(_ fault: Fault) {
        self.fault = fault
        self.inner = ScriptedAdNetwork(
            id: "broken",
            script: [
                "fill": [.fill(ecpm: 1.5)],
                "empty": [.noFill()],
                "denied": [.fail(AdError(.unauthorized, "bad key"))],
                "slow": [.fill(latency: .milliseconds(800))],
            ])
    }

    var requestCount: Int { inner.requestCount + extra.withLock { $0.count } }
    var requestsInFlight: Int { inner.requestsInFlight }
    var requestTexts: [String] { inner.requestTexts + extra.withLock { $0 } }

    func load(_ request: AdRequest) async throws -> AdLoadResult {
        var request = request
        switch fault {
        case .dropsPrivacy: request.privacy = PrivacySignals()
        case .ignoresTimeout: request.timeout = nil
        default: break
        }
        let result: AdLoadResult
        do {
            if fault == .ignoresCancellation {
                let inner = inner
                let copy = request
                result = try await Task.detached { try await inner.load(copy) }.value
            } else {
                result = try await inner.load(request)
            }
        } catch let error as AdError where fault == .wrongErrorCode {
            throw AdError(.network, error.message)
        }
        switch (fault, result) {
        case (.throwsNoFill, .noFill):
            throw AdError(.invalidResponse, "empty response")
        case (.continuesAfterCompletion, .filled):
            let inner = inner
            Task.detached { _ = try? await inner.load(AdRequest(placement: "empty", format: .interstitial)) }
            return result
        case (.duplicateImpression, .filled(let ad)):
            return .filled(
                LoadedAd(
                    networkID: ad.networkID, placement: ad.placement, format: ad.format, creative: ad.creative,
                    ecpm: ad.ecpm, loadedAt: ad.loadedAt, expiresAt: ad.expiresAt,
                    reporter: DoubleReporter(network: self)))
        case (.firesImpressionOnLoad, .filled(let ad)):
            // Counts an impression nobody showed, before handing the ad over.
            _ = try? await ad.report(.impression)
            return result
        default:
            return result
        }
    }

    fileprivate func send(_ text: String) { extra.withLock { $0.append(text) } }

    private struct DoubleReporter: AdEventReporter {
        let network: BrokenNetwork
        func deliver(_ record: AdEventRecord) async throws -> AdEventDelivery {
            network.send("event \(record.event.name)")
            network.send("event \(record.event.name)")
            return .delivered
        }
    }

    var subject: ConformanceSubject {
        ConformanceSubject(
            network: self, wire: self,
            fillRequest: AdRequest(placement: "fill", format: .interstitial),
            noFillRequest: AdRequest(placement: "empty", format: .interstitial),
            failingRequest: (AdRequest(placement: "denied", format: .interstitial), .unauthorized),
            slowRequest: AdRequest(placement: "slow", format: .interstitial))
    }
}

/// Expects `scenario` to fail for `subject` on the rule it is about: the failure's expectation must be `expected`
/// (a skipped scenario or a failure of some other rule — "the fill request to fill" — is not the detection asked for).
func expectFailure(
    _ scenario: @Sendable (ConformanceSubject) async throws -> Void, _ subject: ConformanceSubject, on expected: String,
    sourceLocation: SourceLocation = #_sourceLocation
) async {
    do {
        try await scenario(subject)
        Issue.record("the scenario passed for a broken adapter", sourceLocation: sourceLocation)
    } catch let failure as ConformanceFailure {
        #expect(failure.expectation == expected, "\(failure)", sourceLocation: sourceLocation)
    } catch {
        Issue.record("unexpected error \(error)", sourceLocation: sourceLocation)
    }
}

@Suite("Conformance kit", .timeLimit(.minutes(2)))
struct ConformanceKitTests {
    @Test func wellBehavedScriptedNetworkPassesEveryScenario() async {
        let results = await AdNetworkConformance.runAll(BrokenNetwork(.none).subject)
        #expect(results.count == AdNetworkConformance.resultCount)
        #expect(results.contains { $0.scenario == "impressionIsReportedOncePerShow (nested)" })
        for result in results where result.status != .passed {
            Issue.record("\(result.scenario): \(result.status)")
        }
    }

    /// Issue 42: the event rules hold however the ad reached the app — a network that sends its impression twice
    /// fails the impression rule bare, through a Mediator and through a nested one.
    @Test func theEventScenariosCatchABrokenAdapterOnEveryPath() async {
        let results = await AdNetworkConformance.runAll(BrokenNetwork(.duplicateImpression).subject)
        for name in ["", " (mediated)", " (nested)"] {
            let status = results.first { $0.scenario == "impressionIsReportedOncePerShow" + name }?.status
            guard case .failed(let failure) = status else {
                Issue.record("impressionIsReportedOncePerShow\(name): \(String(describing: status))")
                continue
            }
            #expect(failure.expectation == "at most one wire request for one impression, none for a repeat")
        }
    }

    @Test func scenarioWithoutItsRequestIsSkippedNotPassed() async {
        var subject = BrokenNetwork(.none).subject
        subject.noFillRequest = nil
        let results = await AdNetworkConformance.runAll(subject)
        #expect(
            results.first { $0.scenario == "noFillIsAValue" }?.status == .skipped("the subject has no no-fill request"))
    }

    @Test func detectsWorkContinuingAfterCompletion() async {
        await expectFailure(
            AdNetworkConformance.completionHappensExactlyOnce, BrokenNetwork(.continuesAfterCompletion).subject,
            on: "no wire activity after load returned")
    }

    @Test func detectsNoFillThrownAsAnError() async {
        await expectFailure(
            AdNetworkConformance.noFillIsAValue, BrokenNetwork(.throwsNoFill).subject,
            on: "a .noFill value")
    }

    @Test func detectsIgnoredCancellation() async {
        await expectFailure(
            AdNetworkConformance.cancellationIsHonouredPromptly, BrokenNetwork(.ignoresCancellation).subject,
            on: "no fill after cancellation")
    }

    @Test func detectsIgnoredTimeout() async {
        await expectFailure(
            AdNetworkConformance.timeoutsAreHonoured, BrokenNetwork(.ignoresTimeout).subject,
            on: "AdError timeout after 200 ms")
    }

    @Test func detectsDroppedPrivacySignals() async {
        await expectFailure(
            AdNetworkConformance.privacySignalsReachTheWire, BrokenNetwork(.dropsPrivacy).subject,
            on: "the privacy signals on the wire")
    }

    @Test func detectsDuplicateImpression() async {
        await expectFailure(
            AdNetworkConformance.impressionIsReportedOncePerShow, BrokenNetwork(.duplicateImpression).subject,
            on: "at most one wire request for one impression, none for a repeat")
    }

    @Test func detectsErrorsOutsideTheTaxonomy() async {
        await expectFailure(
            AdNetworkConformance.errorsMapToTheTaxonomy, BrokenNetwork(.wrongErrorCode).subject,
            on: "an AdError unauthorized")
    }

    @Test func detectsEventsSentWithoutBeingReported() async {
        await expectFailure(
            AdNetworkConformance.noEventsBeforeLoadOrAfterInvalidation, BrokenNetwork(.firesImpressionOnLoad).subject,
            on: "no event reported by the adapter itself")
    }

    @Test func failureNamesScenarioExpectationAndObservation() async throws {
        do {
            try await AdNetworkConformance.noFillIsAValue(BrokenNetwork(.throwsNoFill).subject)
            Issue.record("expected a failure")
        } catch let failure as ConformanceFailure {
            #expect(failure.scenario == "noFillIsAValue")
            #expect(failure.expectation == "a .noFill value")
            #expect(failure.observed.contains("invalid_response"))
        }
    }
}

/// An in-process HTTP server: every request gets a 200 with a one-ad JSON body.
private struct AnsweringHTTPClient: HTTPClient {
    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        HTTPResponse(status: 200, body: Data(#"{"id":"a1"}"#.utf8))
    }
}

/// A network that loads over HTTP, with or without its destination rule on the request.
private struct HTTPToyNetwork: AdNetwork {
    let id = "toy"
    let capabilities = AdNetworkCapabilities(formats: [.interstitial])
    let http: any HTTPClient
    let stampsRule: Bool

    func load(_ request: AdRequest) async throws -> AdLoadResult {
        var wire = HTTPRequest(url: "https://toy.example/ad?placement=\(request.placement)")
        if stampsRule { wire = wire.requiring(.forNetwork(baseURL: "https://toy.example"), as: .api) }
        _ = try await http.send(wire)
        let now = AdInstant.zero
        return .filled(
            LoadedAd(
                networkID: id, placement: request.placement, format: request.format,
                creative: AdCreative(id: "a1", kind: "image"), loadedAt: now, expiresAt: now + .seconds(60)))
    }
}

@Suite("The kit holds adapters to their destination rule")
struct DestinationRuleKitTests {
    private func failure(stampsRule: Bool) async throws -> ConformanceFailure? {
        let wire = RecordingHTTPClient(wrapping: AnsweringHTTPClient())
        let subject = ConformanceSubject(
            network: HTTPToyNetwork(http: wire, stampsRule: stampsRule), wire: wire,
            fillRequest: AdRequest(placement: "p", format: .interstitial))
        do {
            try await AdNetworkConformance.everyRequestCarriesADestinationRule(subject)
            return nil
        } catch let failure as ConformanceFailure {
            return failure
        }
    }

    /// Issue 45: "no adapter can send without one" — an adapter whose requests carry no destination rule fails.
    @Test func anAdapterThatSendsWithoutItsDestinationRuleFails() async throws {
        let failure = try #require(try await failure(stampsRule: false), "the kit passed it")
        #expect(failure.observed.contains("https://toy.example/ad"))
        #expect(!failure.observed.contains("placement="), "the query is never shown")
    }

    @Test func anAdapterThatStampsEveryRequestPasses() async throws {
        #expect(try await failure(stampsRule: true) == nil)
    }
}

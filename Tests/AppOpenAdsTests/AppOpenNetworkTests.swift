import AdMediation
import AdMediationTesting
import AdNetworkConformance
import AdTransport
import AppOpenAds
import CurlTransport
import DemandSandbox
import Foundation
import Testing

func withAppOpen(
    _ scenario: SandboxScenario = SandboxScenario(), clock: any AdClock = SystemAdClock(),
    _ body: (AppOpenNetwork, RunningSandbox, RecordingHTTPClient) async throws -> Void
) async throws {
    let sandbox = try await DemandSandbox.start(scenario: scenario)
    let curl = CurlHTTPClient()
    let http = RecordingHTTPClient(wrapping: curl)
    let network = AppOpenNetwork(configuration: .init(baseURL: sandbox.appOpenBaseURL), http: http, clock: clock)
    do { try await body(network, sandbox, http) } catch {
        await curl.shutdown()
        await sandbox.shutdown()
        throw error
    }
    await curl.shutdown()
    await sandbox.shutdown()
}

let testUnit = AppOpenNetwork.testAdUnitID
let mainUnit = "ca-app-pub-sandbox/app_open_main"

func loadError(_ network: AppOpenNetwork, _ unit: String) async -> AdError? {
    do {
        _ = try await network.load(AdRequest(placement: unit, format: .appOpen))
        return nil
    } catch { return error as? AdError }
}

@Suite("App-open network over the sandbox", .timeLimit(.minutes(2)))
struct AppOpenNetworkTests {
    /// The ad carries what the server sent (read from the recorded answer, not from constants of this test).
    @Test func testAdUnitFillsWithTheServersAd() async throws {
        try await withAppOpen { network, sandbox, _ in
            let ad = try #require(try await network.load(AdRequest(placement: testUnit, format: .appOpen)).ad)
            let curl = CurlHTTPClient()
            let raw = try await curl.send(
                HTTPRequest(url: sandbox.appOpenBaseURL + "/appopen/v1/ad?request_id=r1&ad_unit_id=\(testUnit)"))
            await curl.shutdown()
            let other = try JSONSerialization.jsonObject(with: raw.body) as? [String: Any]
            let creative = other?["creative"] as? [String: Any]
            #expect(ad.networkID == "appopen" && ad.format == .appOpen && ad.placement == testUnit)
            #expect(ad.creative.fields["headline"] == creative?["headline"] as? String)
            #expect(ad.creative.fields["cta_text"] == creative?["cta_text"] as? String)
            #expect(ad.creative.fields["app_name"] == (other?["branding"] as? [String: Any])?["app_name"] as? String)
            #expect(
                ad.creative.id.hasPrefix("ao_") && ad.creative.id != other?["ad_id"] as? String,
                "each answer is its own ad")
        }
    }

    /// Seed: an app-open ad expires after four hours; a server TTL shorter than that wins, a longer one does not.
    @Test(arguments: [(600.0, 600), (86_400.0, 14_400), (-5.0, 14_400)])
    func theAdExpiresAtTheShorterOfTheServersTTLAndFourHours(serverTTL: Double, expectedSeconds: Int64) async throws {
        let server = try LoopbackHTTPServer { _ in
            let body =
                (#"{"ad_id":"a1","creative":{"type":"image","url":"https://x/a.png"},"#
                    + #""tracking":{"impression":"https://x/i","click":"https://x/c"},"ttl_seconds":\#(serverTTL)}"#)
            return .respond(.init(headers: [("Content-Type", "application/json")], body: Array(body.utf8)))
        }
        let curl = CurlHTTPClient()
        let clock = ManualAdClock(start: .zero + .seconds(100))
        let network = AppOpenNetwork(configuration: .init(baseURL: server.baseURL), http: curl, clock: clock)
        let ad = try #require(try await network.load(AdRequest(placement: testUnit, format: .appOpen)).ad)
        #expect(ad.expiresAt == clock.now + .seconds(expectedSeconds))
        await curl.shutdown()
    }

    @Test func status204IsNoFill() async throws {
        try await withAppOpen(SandboxScenario(networks: ["appopen": NetworkScenario(fillRate: 0)])) { network, _, _ in
            let result = try await network.load(AdRequest(placement: mainUnit, format: .appOpen))
            #expect(result.ad == nil)
        }
    }

    @Test func unknownAdUnitIsABadRequest() async throws {
        try await withAppOpen { network, _, _ in
            let error = await loadError(network, "nope")
            #expect(error?.code == .badRequest)
            #expect(error?.message.contains("invalid_ad_unit") == true)
        }
    }

    @Test func injected503IsAServerError() async throws {
        try await withAppOpen(
            SandboxScenario(networks: ["appopen": NetworkScenario(faults: [Fault(.status, status: 503)])])
        ) { network, _, _ in
            #expect(await loadError(network, testUnit)?.code == .server(status: 503))
        }
    }

    @Test func injected429CarriesRetryAfter() async throws {
        try await withAppOpen(
            SandboxScenario(networks: [
                "appopen": NetworkScenario(faults: [Fault(.status, status: 429, retryAfterS: 4)])
            ])
        ) { network, _, _ in
            let error = await loadError(network, testUnit)
            #expect(error?.code == .rateLimited(retryAfter: .seconds(4)), "\(String(describing: error))")
        }
    }

    @Test(arguments: [Fault.Kind.malformedJSON, .wrongShape])
    func unreadableBodyIsAnInvalidResponse(kind: Fault.Kind) async throws {
        try await withAppOpen(SandboxScenario(networks: ["appopen": NetworkScenario(faults: [Fault(kind)])])) {
            network, _, _ in
            #expect(await loadError(network, testUnit)?.code == .invalidResponse)
        }
    }

    @Test(arguments: [Fault.Kind.reset, .truncated])
    func brokenConnectionIsANetworkError(kind: Fault.Kind) async throws {
        try await withAppOpen(SandboxScenario(networks: ["appopen": NetworkScenario(faults: [Fault(kind)])])) {
            network, _, _ in
            #expect(await loadError(network, testUnit)?.code == .network)
        }
    }

    @Test func privacySignalsTravelInTheQuery() async throws {
        try await withAppOpen { network, sandbox, _ in
            var request = AdRequest(placement: testUnit, format: .appOpen)
            request.privacy = PrivacySignals(
                gdprApplies: true, tcfConsent: "CPabc", usPrivacy: "1YNN", gpp: "DBA", gppSectionIDs: [2, 6],
                coppa: true, underAgeOfConsent: true)
            _ = try await network.load(request)
            #expect(
                sandbox.records.adRequestPrivacy == [
                    "gdpr=1&gdpr_consent=CPabc&us_privacy=1YNN&gpp=DBA&gpp_sid=2,6&coppa=1&tfua=1"
                ])
        }
    }

    @Test func impressionAndClickAreTrackedOnce() async throws {
        try await withAppOpen { network, sandbox, _ in
            let ad = try #require(try await network.load(AdRequest(placement: testUnit, format: .appOpen)).ad)
            try await ad.report(.impression)
            try await ad.report(.impression)
            try await ad.report(.click)
            // The pings are sent in the background: read the wire once they were (a deadline far above it), not at
            // the end of shutdown's 2 s grace, which a busy machine can exceed.
            let drained = ContinuousClock.now + .seconds(30)
            while network.pendingTracking > 0 && ContinuousClock.now < drained {
                try await Task.sleep(for: .milliseconds(10))
            }
            await network.shutdown()
            let hits = sandbox.records.trackingHits.map { $0.query["e"] ?? "" }
            #expect(hits == ["impression", "click"])
            #expect(sandbox.records.trackingHits.allSatisfy { $0.query["ad"] == ad.creative.id })
        }
    }

    @Test func adapterPassesTheConformanceKit() async throws {
        let scenario = SandboxScenario(placements: [
            "appopen/\(mainUnit)": NetworkScenario(fillRate: 0),
            "appopen/ca-app-pub-sandbox/app_open_resume": NetworkScenario(latencyMs: .fixed(1500)),
        ])
        try await withAppOpen(scenario) { network, _, http in
            let subject = ConformanceSubject(
                network: network, wire: http,
                fillRequest: AdRequest(placement: testUnit, format: .appOpen),
                noFillRequest: AdRequest(placement: mainUnit, format: .appOpen),
                failingRequest: (AdRequest(placement: "unknown-unit", format: .appOpen), .badRequest),
                slowRequest: AdRequest(placement: "ca-app-pub-sandbox/app_open_resume", format: .appOpen))
            for result in await AdNetworkConformance.runAll(subject) where result.status != .passed {
                Issue.record("\(result.scenario): \(result.status)")
            }
        }
    }
}

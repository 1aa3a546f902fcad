import AdMediation
import AdNetworkConformance
import AppOpenAds
import CurlTransport
import DemandSandbox
import Foundation
import Testing

func withAppOpen(_ scenario: SandboxScenario = SandboxScenario(), clock: any AdClock = SystemAdClock(),
                 _ body: (AppOpenNetwork, RunningSandbox, RecordingHTTPClient) async throws -> Void) async throws {
    let sandbox = try await DemandSandbox.start(scenario: scenario)
    let curl = CurlHTTPClient()
    let http = RecordingHTTPClient(wrapping: curl)
    let network = AppOpenNetwork(configuration: .init(baseURL: sandbox.appOpenBaseURL), http: http, clock: clock)
    do { try await body(network, sandbox, http) } catch {
        await curl.shutdown(); await sandbox.shutdown(); throw error
    }
    await curl.shutdown()
    await sandbox.shutdown()
}

let testUnit = AppOpenNetwork.testAdUnitID
let mainUnit = "ca-app-pub-sandbox/app_open_main"

func loadError(_ network: AppOpenNetwork, _ unit: String) async -> AdError? {
    do { _ = try await network.load(AdRequest(placement: unit, format: .appOpen)); return nil } catch { return error as? AdError }
}

@Suite("App-open network over the sandbox")
struct AppOpenNetworkTests {
    @Test func testAdUnitFillsWithAWellFormedAd() async throws {
        let clock = ManualAdClock(start: .zero + .seconds(100))
        try await withAppOpen(clock: clock) { network, _, _ in
            let ad = try #require(try await network.load(AdRequest(placement: testUnit, format: .appOpen)).ad)
            #expect(ad.networkID == "appopen")
            #expect(ad.format == .appOpen)
            #expect(ad.creative.fields["headline"] == "Sunny Puzzles")
            #expect(ad.creative.fields["app_name"] == "Sandbox App")
            #expect(ad.ecpm != nil)
            #expect(ad.expiresAt == clock.now + .seconds(14_400), "min(ttl 14400 s, 4 h)")
        }
    }

    @Test func shorterServerTTLWinsOverFourHours() async throws {
        // The adapter's cap is configurable; with a 1 h cap the sandbox's 4 h TTL is cut to 1 h.
        let sandbox = try await DemandSandbox.start()
        let curl = CurlHTTPClient()
        var configuration = AppOpenNetwork.Configuration(baseURL: sandbox.appOpenBaseURL)
        configuration.maximumAge = .seconds(3600)
        let clock = ManualAdClock()
        let network = AppOpenNetwork(configuration: configuration, http: curl, clock: clock)
        let ad = try #require(try await network.load(AdRequest(placement: testUnit, format: .appOpen)).ad)
        #expect(ad.expiresAt == .zero + .seconds(3600))
        await curl.shutdown()
        await sandbox.shutdown()
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
        try await withAppOpen(SandboxScenario(networks: ["appopen": NetworkScenario(faults: [Fault(.status, status: 503)])])) { network, _, _ in
            #expect(await loadError(network, testUnit)?.code == .server(status: 503))
        }
    }

    @Test func injected429CarriesRetryAfter() async throws {
        try await withAppOpen(SandboxScenario(networks: ["appopen": NetworkScenario(faults: [Fault(.status, status: 429, retryAfterS: 4)])])) { network, _, _ in
            #expect(await loadError(network, testUnit)?.code == .rateLimited(retryAfter: .seconds(4)))
        }
    }

    @Test(arguments: [Fault.Kind.malformedJSON, .wrongShape])
    func unreadableBodyIsAnInvalidResponse(kind: Fault.Kind) async throws {
        try await withAppOpen(SandboxScenario(networks: ["appopen": NetworkScenario(faults: [Fault(kind)])])) { network, _, _ in
            #expect(await loadError(network, testUnit)?.code == .invalidResponse)
        }
    }

    @Test(arguments: [Fault.Kind.reset, .truncated])
    func brokenConnectionIsANetworkError(kind: Fault.Kind) async throws {
        try await withAppOpen(SandboxScenario(networks: ["appopen": NetworkScenario(faults: [Fault(kind)])])) { network, _, _ in
            #expect(await loadError(network, testUnit)?.code == .network)
        }
    }

    @Test func privacySignalsTravelInTheQuery() async throws {
        try await withAppOpen { network, sandbox, _ in
            var request = AdRequest(placement: testUnit, format: .appOpen)
            request.privacy = PrivacySignals(gdprApplies: true, tcfConsent: "CPabc", usPrivacy: "1YNN", gpp: "DBA", gppSectionIDs: [2, 6], coppa: true, underAgeOfConsent: true)
            _ = try await network.load(request)
            #expect(sandbox.records.adRequestPrivacy == ["gdpr=1&gdpr_consent=CPabc&us_privacy=1YNN&gpp=DBA&gpp_sid=2,6&coppa=1&tfua=1"])
        }
    }

    @Test func impressionAndClickAreTrackedOnce() async throws {
        try await withAppOpen { network, sandbox, _ in
            let ad = try #require(try await network.load(AdRequest(placement: testUnit, format: .appOpen)).ad)
            try await ad.report(.impression)
            try await ad.report(.impression)
            try await ad.report(.click)
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

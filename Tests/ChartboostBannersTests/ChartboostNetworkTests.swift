import AdMediation
import AdMediationTesting
import AdNetworkConformance
import CurlTransport
import DemandSandbox
import Foundation
import Testing

@testable import AdPresentation
@testable import ChartboostBanners

let secret = "cb_sig_demo_secret"

func withChartboost(
    _ scenario: SandboxScenario = SandboxScenario(), signature: String = secret, clock: any AdClock = SystemAdClock(),
    _ body: (ChartboostNetwork, RunningSandbox, RecordingHTTPClient) async throws -> Void
) async throws {
    let sandbox = try await DemandSandbox.start(scenario: scenario)
    let curl = CurlHTTPClient()
    let http = RecordingHTTPClient(wrapping: curl)
    let network = ChartboostNetwork(
        configuration: .init(baseURL: sandbox.chartboostBaseURL, appID: "cb_app_demo", appSignature: signature),
        http: http, clock: clock)
    do { try await body(network, sandbox, http) } catch {
        await curl.shutdown()
        await sandbox.shutdown()
        throw error
    }
    await curl.shutdown()
    await sandbox.shutdown()
}

func banner(_ location: String = "Main Menu", _ size: BannerSize = .standard) -> AdRequest {
    AdRequest(placement: location, format: .banner(size))
}

func loadError(_ network: ChartboostNetwork, _ request: AdRequest) async -> AdError? {
    do {
        _ = try await network.load(request)
        return nil
    } catch { return error as? AdError }
}

@Suite("Chartboost-style network over the sandbox", .timeLimit(.minutes(2)))
struct ChartboostNetworkTests {
    @Test(arguments: [BannerSize.standard, .medium, .leaderboard])
    func signedLoadFillsEachSize(size: BannerSize) async throws {
        try await withChartboost { network, _, _ in
            let ad = try #require(try await network.load(banner("Main Menu", size)).ad)
            #expect(ad.creative.width == size.width && ad.creative.height == size.height)
            #expect(ad.format == .banner(size))
            #expect(ad.ecpm != nil && ad.expiresAt != nil)
            #expect(ad.creative.kind == "image" && ad.creative.assetURL != nil)
        }
    }

    @Test func otherSizesAreRefusedBeforeAnyRequest() async throws {
        try await withChartboost { network, _, http in
            #expect(
                await loadError(network, banner("Main Menu", BannerSize(width: 320, height: 100)))?.code
                    == .configuration)
            #expect(http.requestCount == 0)
        }
    }

    @Test func wrongSignatureIsRejectedAsUnauthorized() async throws {
        try await withChartboost(signature: "wrong-secret") { network, _, _ in
            let error = await loadError(network, banner())
            #expect(error?.code == .unauthorized)
            #expect(error?.message.contains("invalid_signature") == true)
        }
    }

    @Test func appSignatureNeverAppearsInErrorsOrDescriptions() async throws {
        let leaked = "super-secret-signature-123"
        try await withChartboost(signature: leaked) { network, _, _ in
            let error = await loadError(network, banner())
            #expect(error != nil)
            #expect(!"\(String(describing: error))".contains(leaked))
            let configuration = ChartboostNetwork.Configuration(
                baseURL: "http://127.0.0.1", appID: "a", appSignature: leaked)
            #expect(!"\(configuration)".contains(leaked))
        }
    }

    @Test func status204IsNoFill() async throws {
        try await withChartboost(SandboxScenario(networks: ["chartboost": NetworkScenario(fillRate: 0)])) {
            network, _, _ in
            let result = try await network.load(banner())
            #expect(result.ad == nil)
        }
    }

    @Test func sizeMismatchIsDiscardedAsNoFill() async throws {
        let server = try LoopbackHTTPServer { _ in
            .respond(
                .init(
                    headers: [("Content-Type", "application/json")],
                    body: Array(
                        """
                        {"ad_id":"x","location":"Main \
                        Menu","size":{"width":300,"height":250},"creative":{"type":"image","url":"https://c/x.png"},
                         "tracking":{"impression":"https://t/i","click":"https://t/c"},"ecpm":1,"expires_in_seconds":60}
                        """.utf8)))
        }
        let curl = CurlHTTPClient()
        let network = ChartboostNetwork(
            configuration: .init(baseURL: server.baseURL, appID: "a", appSignature: "s"), http: curl)
        let result = try await network.load(banner())
        if case .noFill(let noFill) = result {
            #expect(noFill.reason.hasPrefix("size mismatch"))
        } else {
            Issue.record("expected no fill")
        }
        await curl.shutdown()
        server.stop()
    }

    @Test func injected429CarriesRetryAfter() async throws {
        try await withChartboost(
            SandboxScenario(networks: [
                "chartboost": NetworkScenario(faults: [Fault(.status, status: 429, retryAfterS: 9)])
            ])
        ) { network, _, _ in
            #expect(await loadError(network, banner())?.code == .rateLimited(retryAfter: .seconds(9)))
        }
    }

    @Test(arguments: [Fault.Kind.malformedJSON, .wrongShape])
    func unreadableBodyIsAnInvalidResponse(kind: Fault.Kind) async throws {
        try await withChartboost(SandboxScenario(networks: ["chartboost": NetworkScenario(faults: [Fault(kind)])])) {
            network, _, _ in
            #expect(await loadError(network, banner())?.code == .invalidResponse)
        }
    }

    @Test func trackingIsSignedAndFiredOnce() async throws {
        try await withChartboost { network, sandbox, _ in
            let ad = try #require(try await network.load(banner()).ad)
            try await ad.report(.impression)
            try await ad.report(.impression)
            try await ad.report(.click)
            try await eventually("the pings, sent in the background") { sandbox.records.trackingHits.count >= 2 }
            #expect(sandbox.records.trackingHits.map { $0.query["e"] } == ["impression", "click"])
        }
    }

    @Test func privacySignalsReachTheBody() async throws {
        try await withChartboost { network, sandbox, _ in
            var request = banner()
            request.privacy = PrivacySignals(gdprApplies: true, tcfConsent: "CPx", usPrivacy: "1YNN", coppa: true)
            _ = try await network.load(request)
            #expect(sandbox.records.adRequestPrivacy == ["coppa=1&gdpr=1&gdpr_consent=CPx&us_privacy=1YNN"])
        }
    }

    @Test func adapterPassesTheConformanceKit() async throws {
        let scenario = SandboxScenario(placements: [
            "chartboost/Empty Slot": NetworkScenario(fillRate: 0),
            "chartboost/Broken Slot": NetworkScenario(faults: [Fault(.status, status: 503)]),
            "chartboost/Slow Slot": NetworkScenario(latencyMs: .fixed(1500)),
        ])
        try await withChartboost(scenario) { network, _, http in
            let subject = ConformanceSubject(
                network: network, wire: http, fillRequest: banner(), noFillRequest: banner("Empty Slot"),
                failingRequest: (banner("Broken Slot"), .server(status: 503)), slowRequest: banner("Slow Slot"))
            for result in await AdNetworkConformance.runAll(subject) where result.status != .passed {
                Issue.record("\(result.scenario): \(result.status)")
            }
        }
    }
}

@Suite("Banner refresh over the sandbox", .timeLimit(.minutes(2)))
struct BannerRefreshSandboxTests {
    @Test func refreshEveryThirtySecondsTracksOneImpressionPerAd() async throws {
        let clock = ManualAdClock()
        try await withChartboost(clock: clock) { network, sandbox, _ in
            let controller = BannerRefreshController(
                network: network, request: banner(), policy: .init(preloadAfterImpression: false), clock: clock,
                drawsEveryShownAd: true)
            await controller.start()
            await waitForShown(controller, 1)
            await clock.advance(by: .seconds(30))
            await waitForShown(controller, 2)
            while sandbox.records.trackingHits.count < 2 { await Task.pollPause() }
            let ads = shownIDs(await controller.history)
            #expect(Set(ads).count == 2, "two different ads")
            #expect(sandbox.records.trackingHits.map { $0.query["ad"] ?? "" } == ads)
            await controller.stop()
        }
    }

    @Test func bannerObjectCachesAndShowsAgainstTheSandbox() async throws {
        try await withChartboost { network, sandbox, _ in
            let delegate = RecordingDelegate()
            let banner = ChartboostBanner(
                size: .medium, location: "Main Menu", network: network, delegate: delegate, drawsEveryShownAd: true)
            await banner.setAutomaticallyRefreshesContent(false)
            await banner.cache()
            await banner.show()
            await banner.click()
            #expect(delegate.log == ["didCacheAd", "willShowAd", "didShowAd", "shouldConfirmClick", "didClickAd"])
            try await eventually("the pings, sent in the background") { sandbox.records.trackingHits.count >= 2 }
            #expect(sandbox.records.trackingHits.map { $0.query["e"] } == ["impression", "click"])
        }
    }
}

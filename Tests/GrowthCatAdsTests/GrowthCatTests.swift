import AdMediation
import AdMediationTesting
import AdNetworkConformance
import AdStorage
import AdTransport
import CurlTransport
import DemandSandbox
import Foundation
import Synchronization
import TestSupport
import Testing

@testable import GrowthCatAds

func queuePath() -> String {
    FileManager.default.temporaryDirectory.appendingPathComponent("gc-\(UUID().uuidString).sqlite").path
}

struct GCFixture {
    let sandbox: RunningSandbox
    let curl: CurlHTTPClient
    let http: RecordingHTTPClient
    let client: GrowthCatClient
    let clock: ManualAdClock
    let path: String

    func close() async {
        await curl.shutdown()
        await sandbox.shutdown()
        if let media = GrowthCatClient.Configuration.defaultMediaCacheDirectory(eventQueuePath: path) {
            try? FileManager.default.removeItem(at: media)
        }
    }
}

func gcFixture(
    _ scenario: SandboxScenario = SandboxScenario(), apiKey: String = "gc_test_demo", path: String = queuePath(),
    configure: (inout GrowthCatClient.Configuration) -> Void = { _ in }
) async throws -> GCFixture {
    let sandbox = try await DemandSandbox.start(scenario: scenario)
    let curl = CurlHTTPClient()
    let http = RecordingHTTPClient(wrapping: curl)
    let clock = ManualAdClock()
    var configuration = GrowthCatClient.Configuration(
        apiKey: apiKey, baseURL: sandbox.growthcatBaseURL, eventQueuePath: path)
    configuration.requestTimeout = HangGuard.request  // a live sandbox: a hang guard, not the 10 s default
    configure(&configuration)
    let client = try GrowthCatClient(configuration: configuration, http: http, clock: clock)
    return GCFixture(sandbox: sandbox, curl: curl, http: http, client: client, clock: clock, path: path)
}

func gcError(_ operation: () async throws -> Void) async -> AdError? {
    do {
        try await operation()
        return nil
    } catch { return error as? AdError }
}

extension Task where Success == Never, Failure == Never {
    static func pollPause() async { try? await Task.sleep(for: .microseconds(200)) }
}

@Suite("GrowthCat client over the sandbox", .timeLimit(.minutes(2)))
struct GrowthCatClientTests {
    @Test func bootstrapExposesTheAdsConfig() async throws {
        let f = try await gcFixture()
        let bootstrap = try await f.client.refreshSDKConfig()
        #expect(bootstrap.adsConfig.adsEnabled && bootstrap.adsConfig.formats == [.banner, .interstitial])
        #expect(bootstrap.adsConfig.maxOfflineAdEvents == 500 && bootstrap.adsConfig.adCacheTTLSeconds == 300)
        #expect(await f.client.sdkBootstrap == bootstrap)
        await f.close()
    }

    @Test func rewardedPlacementLoadsWithItsRewardAndClosePolicy() async throws {
        let f = try await gcFixture()
        let ad = try #require(try await f.client.loadAd(placementKey: "rewarded_coins"))
        #expect(ad.isRewarded && ad.placement?.rewardName == "Coins" && ad.placement?.rewardAmount == 50)
        #expect(ad.placement?.minimumViewSeconds == 15 && ad.creativeType == "video" && ad.ecpm != nil)
        await f.close()
    }

    @Test func appStoreCreativesCarryOverlayOrProductView() async throws {
        let f = try await gcFixture()
        #expect(try await f.client.loadAd(placementKey: "install_offer")?.storePresentation == "overlay")
        #expect(try await f.client.loadAd(placementKey: "store_page")?.storePresentation == "product_view")
        await f.close()
    }

    @Test func formatBasedLoadUsesServe() async throws {
        let f = try await gcFixture()
        let ad = try await f.client.loadAd(format: .banner)
        #expect(ad != nil)
        #expect(f.sandbox.records.requestCounts["GET /growthcat/v1/ads/serve"] == 1)
        await f.close()
    }

    @Test func unknownPlacement404IsNilNotAnError() async throws {
        let f = try await gcFixture()
        #expect(try await f.client.loadAd(placementKey: "nope") == nil)
        await f.close()
    }

    @Test func emptyCatalogIsNil() async throws {
        let f = try await gcFixture(SandboxScenario(networks: ["growthcat": NetworkScenario(fillRate: 0)]))
        #expect(try await f.client.loadAd(placementKey: "home_banner") == nil)
        await f.close()
    }

    /// Seed: the catalog TTL is `min(cache_ttl_seconds, ad_cache_ttl_seconds)` — "overridden per-response when the
    /// server sends a tighter TTL". Both orders are checked, so a client taking either one alone fails.
    @Test(arguments: [(60, 300, 60), (900, 300, 300)])
    func catalogIsCachedForTheTighterOfServerAndBootstrapTTL(serverTTL: Int, bootstrapTTL: Int, expected: Int)
        async throws
    {
        let catalogRequests = Synchronization.Atomic<Int>(0)
        let server = try LoopbackHTTPServer { request in
            if request.path.hasSuffix("/sdk/config") {
                return .respond(
                    .init(
                        body: Array(
                            (#"{"app_id":"a","workspace":"w","ads":{"ads_enabled":true,"#
                                + #""formats":["banner"],"ad_cache_ttl_seconds":\#(bootstrapTTL)}}"#)
                                .utf8)))
            }
            catalogRequests.add(1, ordering: .relaxed)
            let ad =
                (#"{"placement":{"key":"b","format":"banner"},"campaign":{"id":"c"},"creative":{"id":"cr","#
                    + (#""creative_type":"image","public_asset_url":"https://x/a.png"},"#
                        + #""tracking":{"allocation_id":"a","token":"t"}}"#))
            return .respond(.init(body: Array(#"{"cache_ttl_seconds":\#(serverTTL),"ads":[\#(ad)]}"#.utf8)))
        }
        let curl = CurlHTTPClient()
        let clock = ManualAdClock()
        let client = try GrowthCatClient(
            configuration: .init(apiKey: "k", baseURL: server.baseURL, eventQueuePath: queuePath()), http: curl,
            clock: clock)
        _ = try await client.loadAd(placementKey: "b")
        _ = try await client.loadAd(placementKey: "b")
        await client.prefetchAdCatalogs(placementKeys: ["b"])
        #expect(catalogRequests.load(ordering: .relaxed) == 1, "loads and prefetch within the TTL share one request")
        await clock.advance(by: .seconds(expected - 1))
        _ = try await client.loadAd(placementKey: "b")
        #expect(catalogRequests.load(ordering: .relaxed) == 1, "still cached one second before \(expected) s")
        await clock.advance(by: .seconds(1))
        _ = try await client.loadAd(placementKey: "b")
        #expect(catalogRequests.load(ordering: .relaxed) == 2, "expired at \(expected) s")
        await curl.shutdown()
    }

    @Test func offlineServesAValidCacheAndNilOnceItExpired() async throws {
        let f = try await gcFixture()
        let first = try await f.client.loadAd(placementKey: "home_banner")
        f.sandbox.setScenario(SandboxScenario(networks: ["growthcat": NetworkScenario(faults: [Fault(.reset)])]))
        #expect(try await f.client.loadAd(placementKey: "home_banner") == first, "valid cache while offline")
        await f.clock.advance(by: .seconds(300))
        #expect(try await f.client.loadAd(placementKey: "home_banner") == nil, "expired cache and no network: nil")
        await f.close()
    }

    @Test func badAPIKeyThrowsUnauthorizedWithoutTheKey() async throws {
        let key = "gc_live_supersecret9876"
        let f = try await gcFixture(apiKey: key)
        // 401 is not retried; the budget is generous so that a busy machine cannot turn the answer into a timeout.
        let error = await gcError { _ = try await f.client.loadAd(placementKey: "home_banner", timeout: .seconds(10)) }
        #expect(error?.code == .unauthorized)
        #expect(
            !"\(String(describing: error))".contains(key)
        )
        let configuration = GrowthCatClient.Configuration(apiKey: key, baseURL: "http://127.0.0.1", eventQueuePath: "x")
        #expect("\(configuration)".contains("gc_live_…9876") && !"\(configuration)".contains("supersecret"))
        await f.close()
    }

    @Test(arguments: [(429, "rate_limited"), (503, "server_503"), (400, "server_400"), (403, "server_403")])
    func statusCodesFollowTheSeedTable(status: Int, kind: String) async throws {
        let f = try await gcFixture(
            SandboxScenario(placements: [
                "growthcat/home_banner": NetworkScenario(faults: [Fault(.status, status: status, retryAfterS: 6)])
            ]))
        _ = try await f.client.refreshSDKConfig()
        // A one-second budget leaves no room for the first one-second back-off: the 5xx is reported as it is.
        let error = await gcError { _ = try await f.client.loadAd(placementKey: "home_banner", timeout: .seconds(1)) }
        #expect(error?.code.name == kind)
        if status == 429 { #expect(error?.code == .rateLimited(retryAfter: .seconds(6))) }
        await f.close()
    }

    @Test(arguments: [Fault.Kind.malformedJSON, .wrongShape])
    func unreadableCatalogIsAnInvalidResponse(kind: Fault.Kind) async throws {
        let f = try await gcFixture(SandboxScenario(networks: ["growthcat": NetworkScenario(faults: [Fault(kind)])]))
        _ = try await f.client.refreshSDKConfig()
        #expect(await gcError { _ = try await f.client.loadAd(placementKey: "home_banner") }?.code == .invalidResponse)
        await f.close()
    }

    @Test func privacyAndUserTravelInTheCatalogQuery() async throws {
        let f = try await gcFixture()
        _ = try await f.client.loadAd(
            placementKey: "home_banner", appUserID: "u1", sessionID: "s1",
            privacy: PrivacySignals(
                gdprApplies: true, tcfConsent: "CPx", usPrivacy: "1YNN", gpp: "DBA", gppSectionIDs: [7], coppa: true))
        #expect(
            f.sandbox.records.adRequestPrivacy == ["gdpr=1&gdpr_consent=CPx&us_privacy=1YNN&gpp=DBA&gpp_sid=7&coppa=1"])
        #expect(f.http.requestTexts.last?.contains("app_user_id=u1&session_id=s1") == true)
        await f.close()
    }
}

@Suite("GrowthCat events and the durable queue", .timeLimit(.minutes(2)))
struct GrowthCatEventTests {
    @Test func impressionAndClickAreSentAtOnce() async throws {
        let f = try await gcFixture()
        let ad = try #require(try await f.client.loadAd(placementKey: "level_complete"))
        try await f.client.trackAdEvent(.impression, for: ad, placementKey: "level_complete", appUserID: "u1")
        // Sent at once, in the background: the caller never waits for the network (no clock advance needed).
        #expect(await eventually { f.sandbox.growthcatRecords.events.map(\.eventName) == ["impression"] })
        try await f.client.trackAdEvent(.click, for: ad, placementKey: "level_complete")
        #expect(await eventually { f.sandbox.growthcatRecords.batches == 2 })
        #expect(await eventually { await f.client.pendingEventCount == 0 })
        await f.close()
    }

    @Test func otherEventsWaitForTenOrThirtySeconds() async throws {
        let f = try await gcFixture()
        let ad = try #require(try await f.client.loadAd(placementKey: "video_break"))
        for pct in 1...9 {
            try await f.client.trackAdEvent(
                .videoProgress, for: ad, placementKey: "video_break", metadata: ["progress_pct": "\(pct)"])
        }
        #expect(f.sandbox.growthcatRecords.events.isEmpty)
        try await f.client.trackAdEvent(.videoComplete, for: ad, placementKey: "video_break")
        #expect(
            await eventually { f.sandbox.growthcatRecords.events.count == 10 }, "the 10th event flushes the batch")
        #expect(await eventually { await f.client.pendingEventCount == 0 })
        try await f.client.trackAdEvent(.adClosed, for: ad, placementKey: "video_break")
        await f.clock.waitForSleepers(1)
        await f.clock.advance(by: .seconds(30))
        while await f.client.pendingEventCount > 0 { await Task.pollPause() }
        #expect(f.sandbox.growthcatRecords.events.last?.eventName == "ad_closed")
        await f.close()
    }

    @Test func backgroundFlushesEverything() async throws {
        let f = try await gcFixture()
        let ad = try #require(try await f.client.loadAd(placementKey: "video_break"))
        try await f.client.trackAdEvent(.videoStart, for: ad, placementKey: "video_break")
        let report = await f.client.applicationDidEnterBackground()
        #expect(report.sent == 1 && report.remaining == 0)
        #expect(f.sandbox.growthcatRecords.events.map(\.eventName) == ["video_start"])
        await f.close()
    }

    @Test func offlineEventsStayQueuedAndReplayWithTheirIDsWhenTheServerIsBack() async throws {
        let f = try await gcFixture()
        let ad = try #require(try await f.client.loadAd(placementKey: "level_complete"))
        let port = f.sandbox.port
        await f.sandbox.shutdown()
        for _ in 0..<3 { try await f.client.trackAdEvent(.impression, for: ad, placementKey: "level_complete") }
        #expect(await f.client.pendingEventCount == 3)
        #expect(await eventually { await f.client.isOffline })
        await f.client.deliveryIdle()
        var configuration = SandboxConfiguration()
        configuration.port = port
        let back = try await DemandSandbox.start(configuration: configuration)
        let report = await f.client.flushAdEvents()
        #expect(report.sent == 3)
        #expect(back.growthcatRecords.events.count == 3 && back.growthcatRecords.duplicates == 0)
        #expect(await f.client.isOffline == false)
        await back.shutdown()
        await f.curl.shutdown()
    }

    @Test func queuedEventsSurviveANewClient() async throws {
        let path = queuePath()
        let f = try await gcFixture(path: path)
        let ad = try #require(try await f.client.loadAd(placementKey: "video_break"))
        try await f.client.trackAdEvent(.videoStart, for: ad, placementKey: "video_break")
        let reopened = try GrowthCatClient(
            configuration: .init(apiKey: "gc_test_demo", baseURL: f.sandbox.growthcatBaseURL, eventQueuePath: path),
            http: f.curl)
        #expect(await reopened.pendingEventCount == 1)
        #expect(await reopened.flushAdEvents().sent == 1)
        await f.close()
    }

    @Test func rewardIsGrantedOnlyOnServerValidation() async throws {
        let f = try await gcFixture()
        let ad = try #require(try await f.client.loadAd(placementKey: "rewarded_coins"))
        let short = try await f.client.validateAdReward(
            for: ad, appUserID: "u1", sessionID: nil, viewedSeconds: 5, completed: false)
        #expect(!short.rewardValidated && short.reward == nil)
        let full = try await f.client.validateAdReward(
            for: ad, appUserID: "u1", sessionID: "s", viewedSeconds: 30, completed: true)
        #expect(full.rewardValidated && full.reward?.amount == 50)
        await f.close()
    }

    @Test func rewardValidationRequiresAUserAndSendsNothingWithout() async throws {
        let f = try await gcFixture()
        let ad = try #require(try await f.client.loadAd(placementKey: "rewarded_coins"))
        let error = await gcError {
            _ = try await f.client.validateAdReward(
                for: ad, appUserID: " ", sessionID: nil, viewedSeconds: 30, completed: true)
        }
        #expect(error?.code == .configuration)
        #expect(f.sandbox.growthcatRecords.rewardValidations.isEmpty)
        await f.close()
    }

    @Test func offlineRewardValidationThrowsAndStoresNothing() async throws {
        let f = try await gcFixture()
        let ad = try #require(try await f.client.loadAd(placementKey: "rewarded_coins"))
        await f.sandbox.shutdown()
        let error = await gcError {
            _ = try await f.client.validateAdReward(
                for: ad, appUserID: "u1", sessionID: nil, viewedSeconds: 30, completed: true)
        }
        #expect(error?.code == .network)
        #expect(await f.client.pendingEventCount == 0, "no pending reward is stored")
        await f.curl.shutdown()
    }
}

@Suite("Event queue store", .timeLimit(.minutes(2)))
struct EventQueueStoreTests {
    @Test func capDropsTheOldest() async throws {
        let store = try EventQueueStore(path: queuePath())
        for i in 0..<5 { try await store.append(eventID: "e\(i)", payload: Data("\(i)".utf8), cap: 3) }
        #expect(try await store.peek(limit: 10).map(\.eventID) == ["e2", "e3", "e4"])
    }

    @Test func appendingTheSameIDTwiceKeepsOne() async throws {
        let store = try EventQueueStore(path: queuePath())
        try await store.append(eventID: "e", payload: Data(), cap: 10)
        try await store.append(eventID: "e", payload: Data(), cap: 10)
        #expect(try await store.count() == 1)
    }

    @Test func removeDeletesOnlyTheGivenIDs() async throws {
        let store = try EventQueueStore(path: queuePath())
        for i in 0..<3 { try await store.append(eventID: "e\(i)", payload: Data(), cap: 10) }
        try await store.remove(eventIDs: ["e0", "e2"])
        #expect(try await store.peek(limit: 10).map(\.eventID) == ["e1"])
    }
}

@Suite("GrowthCat as an AdNetwork", .timeLimit(.minutes(2)))
struct GrowthCatNetworkTests {
    @Test func rewardedFormatLoadsARewardedAdWithItsPrice() async throws {
        let f = try await gcFixture()
        let ad = try #require(
            try await GrowthCatNetwork(client: f.client).load(AdRequest(placement: "rewarded_coins", format: .rewarded))
                .ad)
        #expect(ad.networkID == "growthcat" && ad.ecpm != nil && ad.creative.kind == "video")
        try await ad.report(.videoProgress(percent: 50))
        _ = await f.client.flushAdEvents()
        #expect(f.sandbox.growthcatRecords.events.first?.metadata["progress_pct"] == "50")
        await f.close()
    }

    @Test func adapterPassesTheConformanceKit() async throws {
        let f = try await gcFixture(
            SandboxScenario(placements: [
                "growthcat/home_banner": NetworkScenario(fillRate: 0),
                "growthcat/store_page": NetworkScenario(faults: [Fault(.status, status: 503)]),
                "growthcat/video_break": NetworkScenario(latencyMs: .fixed(1500)),
            ])
        ) {
            // The failing request's 503 is its answer (no retry), without a short timeout to keep the back-off out.
            $0.maxServerRetries = 0
        }
        let network = GrowthCatNetwork(client: f.client)
        _ = try await f.client.refreshSDKConfig()
        let subject = ConformanceSubject(
            network: network, wire: f.http,
            fillRequest: AdRequest(placement: "level_complete", format: .interstitial),
            noFillRequest: AdRequest(placement: "home_banner", format: .banner(.standard)),
            failingRequest: (
                AdRequest(placement: "store_page", format: .interstitial, timeout: HangGuard.request),
                .server(status: 503)
            ),
            slowRequest: AdRequest(placement: "video_break", format: .interstitial))
        for result in await AdNetworkConformance.runAll(subject) where result.status != .passed {
            Issue.record("\(result.scenario): \(result.status)")
        }
        await f.close()
    }
}

@Suite("GrowthCat media cache", .timeLimit(.minutes(2)))
struct GrowthCatMediaTests {
    final class Wall: Sendable {
        let seconds = LockedValue<Double>(1_800_000_000)
        var now: @Sendable () -> Date { { [self] in Date(timeIntervalSince1970: seconds.withLock { $0 }) } }
    }

    /// The default media cache (beside the event queue), with a wall clock the test moves.
    func mediaFixture(wall: Wall) async throws -> (GCFixture, URL) {
        let f = try await gcFixture { $0.now = wall.now }
        let directory = try #require(GrowthCatClient.Configuration.defaultMediaCacheDirectory(eventQueuePath: f.path))
        return (f, directory)
    }

    @Test func prefetchDownloadsPrefetchStrategyCreativesUnderAHashedName() async throws {
        let wall = Wall()
        let (f, directory) = try await mediaFixture(wall: wall)
        await f.client.prefetchAdCatalogs(placementKeys: ["video_break"])
        let ad = try #require(try await f.client.loadAd(placementKey: "video_break"))
        #expect(ad.assetStrategy == "prefetch")
        let file = try #require(await f.client.cachedCreative(for: ad))
        #expect(file.lastPathComponent == MediaCache.fileName(for: ad.assetURL) + ".asset")
        #expect(file.deletingLastPathComponent().path == directory.path)
        #expect(try Data(contentsOf: file) == (try await f.curl.send(HTTPRequest(url: ad.assetURL))).body)
        await f.close()
    }

    @Test func lazyCreativesAreNotPrefetched() async throws {
        let (f, _) = try await mediaFixture(wall: Wall())
        await f.client.prefetchAdCatalogs(placementKeys: ["level_complete"])
        let ad = try #require(try await f.client.loadAd(placementKey: "level_complete"))
        #expect(ad.assetStrategy == "lazy")
        #expect(await f.client.cachedCreative(for: ad) == nil)
        await f.close()
    }

    @Test func creativeTTLOverridesTheMediaTTLAndExpires() async throws {
        let wall = Wall()
        let (f, _) = try await mediaFixture(wall: wall)
        var ad = try #require(try await f.client.loadAd(placementKey: "level_complete"))
        ad.assetTTLSeconds = 60
        #expect(try await f.client.cacheCreative(for: ad) != nil)
        let requests = f.sandbox.records.requestCounts.filter { $0.key.contains("/assets/") }.values.reduce(0, +)
        _ = try await f.client.cacheCreative(for: ad)
        #expect(
            f.sandbox.records.requestCounts.filter { $0.key.contains("/assets/") }.values.reduce(0, +) == requests,
            "cached: no second download")
        wall.seconds.withLock { $0 += 60 }
        #expect(await f.client.cachedCreative(for: ad) == nil, "expired after its own 60 s TTL")
        await f.close()
    }
}

@Suite("GrowthCat bootstrap rules", .timeLimit(.minutes(2)))
struct GrowthCatBootstrapRuleTests {
    /// A server whose bootstrap is `config` and whose catalog holds one banner.
    func crafted(config: String) throws -> (GrowthCatClient, LoopbackHTTPServer, CurlHTTPClient) {
        let banner =
            (#"{"placement":{"key":"b","format":"banner"},"campaign":{"id":"c"},"creative":{"id":"cr","#
                + (#""creative_type":"image","public_asset_url":"https://x/a.png"},"#
                    + #""tracking":{"allocation_id":"a","token":"t"}}"#))
        let server = try LoopbackHTTPServer { request in
            let body = request.path.hasSuffix("/sdk/config") ? config : #"{"cache_ttl_seconds":300,"ads":[\#(banner)]}"#
            return .respond(.init(headers: [("Content-Type", "application/json")], body: Array(body.utf8)))
        }
        let curl = CurlHTTPClient()
        let client = try GrowthCatClient(
            configuration: .init(apiKey: "gc_test_x", baseURL: server.baseURL, eventQueuePath: queuePath()), http: curl)
        return (client, server, curl)
    }

    @Test func adsDisabledLoadsNothing() async throws {
        let (client, server, curl) = try crafted(
            config: #"{"app_id":"a","workspace":"test","ads":{"ads_enabled":false,"formats":["banner"]}}"#)
        #expect(try await client.loadAd(placementKey: "b") == nil)
        #expect(server.requestsReceived == 1, "only the bootstrap: no catalog request when ads are disabled")
        await curl.shutdown()
        server.stop()
    }

    @Test func missingAdsObjectMeansDisabled() async throws {
        let (client, server, curl) = try crafted(config: #"{"app_id":"a","workspace":"test"}"#)
        #expect(try await client.refreshSDKConfig().adsConfig.adsEnabled == false)
        #expect(try await client.loadAd(placementKey: "b") == nil)
        await curl.shutdown()
        server.stop()
    }

    @Test func formatNotInTheBootstrapIsNotServed() async throws {
        let (client, server, curl) = try crafted(
            config: #"{"app_id":"a","workspace":"test","ads":{"ads_enabled":true,"formats":["interstitial"]}}"#)
        #expect(try await client.loadAd(placementKey: "b") == nil)
        await curl.shutdown()
        server.stop()
    }
}

@Suite("GrowthCat event delivery rules", .timeLimit(.minutes(2)))
struct GrowthCatDeliveryTests {
    /// What an event server received, and the status it answers.
    final class EventLog: Sendable {
        private let state: LockedValue<(batches: [[String]], status: Int)>
        init(status: Int) { state = .init(([], status)) }
        func record(_ ids: [String]) -> Int {
            state.withLock {
                $0.batches.append(ids)
                return $0.status
            }
        }
        var batches: [[String]] { state.withLock { $0.batches } }
    }

    /// A server that answers the bootstrap and a catalog, and `eventStatus` to event batches (counting them).
    final class EventServer: Sendable {
        let server: LoopbackHTTPServer
        let log: EventLog

        init(eventStatus: Int) throws {
            let log = EventLog(status: eventStatus)
            self.log = log
            let ad =
                (#"{"placement":{"key":"p","format":"interstitial"},"campaign":{"id":"c"},"creative":{"id":"cr","#
                    + (#""creative_type":"image","public_asset_url":"https://x/a.png"},"#
                        + #""tracking":{"allocation_id":"a","token":"t"}}"#))
            server = try LoopbackHTTPServer { request in
                if request.path.hasSuffix("/sdk/config") {
                    return .respond(
                        .init(
                            body: Array(
                                (#"{"app_id":"a","workspace":"test","ads":{"ads_enabled":true,"#
                                    + #""formats":["interstitial"],"max_offline_ad_events":500}}"#)
                                    .utf8)))
                }
                if request.path.hasSuffix("/ads/events") {
                    let events =
                        ((try? JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any])?["events"]
                            as? [[String: Any]]) ?? []
                    let status = log.record(events.compactMap { $0["sdk_event_id"] as? String })
                    return .respond(.init(status: status, body: Array("{}".utf8)))
                }
                return .respond(.init(body: Array(#"{"ads":[\#(ad)]}"#.utf8)))
            }
        }

        var received: [[String]] { log.batches }
    }

    func configuration(_ server: EventServer, _ path: String) -> GrowthCatClient.Configuration {
        var configuration = GrowthCatClient.Configuration(
            apiKey: "gc_test_x", baseURL: server.server.baseURL, eventQueuePath: path)
        configuration.retryJitter = 0  // exact back-off delays
        return configuration
    }

    func client(_ server: EventServer, clock: any AdClock = SystemAdClock(), path: String = queuePath()) throws -> (
        GrowthCatClient, CurlHTTPClient
    ) {
        let curl = CurlHTTPClient()
        return (
            try GrowthCatClient(
                configuration: configuration(server, path), http: curl, clock: clock), curl
        )
    }

    @Test func aBatchAnswered400IsDroppedForGood() async throws {
        let server = try EventServer(eventStatus: 400)
        let (c, curl) = try client(server)
        let ad = try #require(try await c.loadAd(placementKey: "p"))
        try await c.trackAdEvent(.impression, for: ad, placementKey: "p")
        #expect(await eventually { await c.pendingEventCount == 0 })
        await c.deliveryIdle()
        #expect(server.received.count == 1, "sent once, never retried")
        await curl.shutdown()
        server.server.stop()
    }

    @Test func serverErrorsAreRetriedThreeTimesWithExponentialBackoffAndKeepTheSameIDs() async throws {
        let server = try EventServer(eventStatus: 503)
        let clock = ManualAdClock()
        let (c, curl) = try client(server, clock: clock)
        let ad = try #require(try await c.loadAd(placementKey: "p"))
        let flush = Task { try await c.trackAdEvent(.impression, for: ad, placementKey: "p") }
        while server.received.count < 4 {
            // Advance only while the flush sleeps in its back-off, so the clock never runs ahead of it.
            if clock.sleeperCount > 0 { await clock.advance(by: .milliseconds(100)) } else { await Task.pollPause() }
        }
        try await flush.value
        #expect(server.received.count == 4, "the first try and 3 retries")
        #expect(Set(server.received.map { $0 }).count == 1, "every retry carries the same sdk_event_id")
        #expect(await c.pendingEventCount == 1, "still queued for a later flush")
        await curl.shutdown()
        server.server.stop()
    }

    @Test func backoffDelaysDouble() async throws {
        let server = try EventServer(eventStatus: 503)
        let clock = ManualAdClock()
        let (c, curl) = try client(server, clock: clock)
        let ad = try #require(try await c.loadAd(placementKey: "p"))
        let flush = Task { try await c.trackAdEvent(.impression, for: ad, placementKey: "p") }
        var attemptTimes: [AdInstant] = []
        while attemptTimes.count < 4 {
            if server.received.count > attemptTimes.count {
                attemptTimes.append(clock.now)
                continue
            }
            if clock.sleeperCount > 0 { await clock.advance(by: .milliseconds(100)) } else { await Task.pollPause() }
        }
        try await flush.value
        let gaps = zip(attemptTimes.dropFirst(), attemptTimes).map { $0 - $1 }
        #expect(gaps == [.seconds(1), .seconds(2), .seconds(4)])
        await curl.shutdown()
        server.server.stop()
    }

    @Test func connectivityReturningReplaysTheQueue() async throws {
        struct Monitor: ConnectivityMonitor {
            let changes: AsyncStream<Bool>
        }
        let (stream, continuation) = AsyncStream<Bool>.makeStream()
        let server = try EventServer(eventStatus: 202)
        let path = queuePath()
        let store = try EventQueueStore(path: path)
        try await store.append(
            eventID: "offline-1", payload: Data(#"{"sdk_event_id":"offline-1","event_name":"click"}"#.utf8), cap: 500)
        let (c, curl) = try client(server, path: path)
        await c.monitor(Monitor(changes: stream))
        continuation.yield(true)
        while await c.pendingEventCount > 0 { await Task.pollPause() }
        #expect(server.received == [["offline-1"]])
        await curl.shutdown()
        server.server.stop()
    }
}

@Suite("GrowthCat offline recovery", .timeLimit(.minutes(2)))
struct GrowthCatRecoveryTests {
    /// Tracks one event while the sandbox is down, then brings it back on the same port.
    func offlineThenBack(_ f: GCFixture) async throws -> RunningSandbox {
        let ad = try #require(try await f.client.loadAd(placementKey: "level_complete"))
        let port = f.sandbox.port
        await f.sandbox.shutdown()
        try await f.client.trackAdEvent(.click, for: ad, placementKey: "level_complete")
        #expect(await eventually { await f.client.isOffline })
        await f.client.deliveryIdle()
        #expect(await f.client.pendingEventCount == 1)
        var configuration = SandboxConfiguration()
        configuration.port = port
        return try await DemandSandbox.start(configuration: configuration)
    }

    @Test func aSuccessfulRequestReplaysTheQueue() async throws {
        let f = try await gcFixture()
        let back = try await offlineThenBack(f)
        _ = try await f.client.refreshSDKConfig()  // any request that succeeds shows connectivity is back
        while await f.client.pendingEventCount > 0 { await Task.pollPause() }
        #expect(back.growthcatRecords.events.map(\.eventName) == ["click"])
        await back.shutdown()
        await f.curl.shutdown()
    }

    @Test func thePeriodicProbeReplaysTheQueueWithoutAnyCall() async throws {
        let f = try await gcFixture()
        let back = try await offlineThenBack(f)
        await f.clock.waitForSleepers(1)  // the probe sleeps its 30 s
        await f.clock.advance(by: .seconds(30))
        while await f.client.pendingEventCount > 0 { await Task.pollPause() }
        #expect(back.growthcatRecords.events.map(\.eventName) == ["click"])
        #expect(await f.client.isOffline == false)
        await back.shutdown()
        await f.curl.shutdown()
    }
}

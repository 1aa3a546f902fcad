import AdMediation
import AdMediationTesting
import CurlTransport
import Foundation
import TestSupport
import Testing

@testable import GrowthCatAds

/// The catalog answers a scripted server gives (a status per request, then 200), and the requests it saw.
final class CatalogScript: Sendable {
    private let state: LockedValue<(statuses: [Int], targets: [String])>
    init(_ statuses: [Int]) { state = LockedValue((statuses, [])) }
    func next(_ target: String) -> Int {
        state.withLock { s in
            s.targets.append(target)
            return s.statuses.isEmpty ? 200 : s.statuses.removeFirst()
        }
    }
    var targets: [String] { state.withLock { $0.targets } }
}

/// A flag set once.
final class Flag: Sendable {
    private let state = LockedValue(false)
    func set() { state.withLock { $0 = true } }
    var isSet: Bool { state.withLock { $0 } }
}

/// A GrowthCat server whose catalog follows a `CatalogScript`.
func scriptedCatalogServer(_ script: CatalogScript, retryAfter: String? = nil) throws -> LoopbackHTTPServer {
    try LoopbackHTTPServer { request in
        if request.path.hasSuffix("/sdk/config") {
            return .respond(
                .init(
                    body: Array(
                        #"{"app_id":"a","workspace":"w","ads":{"ads_enabled":true,"formats":["interstitial"]}}"#.utf8)))
        }
        let status = script.next(request.target)
        if status != 200 {
            let headers = retryAfter.map { [("Retry-After", $0)] } ?? []
            return .respond(
                .init(status: status, headers: headers, body: Array(#"{"error":{"code":"x","message":"y"}}"#.utf8)))
        }
        let ad =
            (#"{"placement":{"key":"p","format":"interstitial"},"campaign":{"id":"c"},"creative":{"id":"cr","#
                + (#""creative_type":"image","public_asset_url":"https://x/a.png"},"#
                    + #""tracking":{"allocation_id":"a","token":"t"}}"#))
        return .respond(.init(body: Array(#"{"cache_ttl_seconds":300,"ads":[\#(ad)]}"#.utf8)))
    }
}

@Suite("GrowthCat: the status table applies to loads", .timeLimit(.minutes(2)))
struct LoadStatusTests {
    func client(_ server: LoopbackHTTPServer, clock: ManualAdClock, caching: Bool = false) throws -> (
        GrowthCatClient, CurlHTTPClient
    ) {
        let curl = CurlHTTPClient()
        var configuration = GrowthCatClient.Configuration(
            apiKey: "k", baseURL: server.baseURL, eventQueuePath: queuePath())
        configuration.catalogCaching = caching
        return (try GrowthCatClient(configuration: configuration, http: curl, clock: clock), curl)
    }

    /// Drives a load on a manual clock: advances time only while the load sleeps in its back-off; fails past a hang
    /// guard (``HangGuard/wait``, real time: a busy machine is slow, not wrong).
    func drive<T: Sendable>(_ clock: ManualAdClock, _ load: @escaping @Sendable () async throws -> T) async throws -> T
    {
        let finished = Flag()
        let task = Task {
            defer { finished.set() }
            return try await load()
        }
        let deadline = ContinuousClock.now + HangGuard.wait
        while !finished.isSet {
            guard ContinuousClock.now < deadline else {
                task.cancel()
                Issue.record("the load did not finish")
                throw CancellationError()
            }
            if clock.sleeperCount > 0 {
                await clock.advance(by: .milliseconds(250))
            } else {
                try await Task.sleep(for: .milliseconds(1))
            }
        }
        return try await task.value
    }

    /// Seed: 5xx → "Retry with exponential backoff", at most 3 retries.
    @Test func a5xxOnALoadIsRetriedWithExponentialBackOff() async throws {
        let script = CatalogScript([503, 503])
        let server = try scriptedCatalogServer(script)
        let clock = ManualAdClock()
        let (c, curl) = try client(server, clock: clock)
        let ad = try await drive(clock) { try await c.loadAd(placementKey: "p") }
        #expect(ad?.creativeID == "cr")
        #expect(script.targets.count == 3, "two 503s, then the answer")
        #expect(clock.now >= .zero + .seconds(3), "waited 1 s, then 2 s")
        await curl.shutdown()
        server.stop()
    }

    @Test func retriesStopWhenTheNextAttemptWouldStartAfterTheLoadsDeadline() async throws {
        let script = CatalogScript([503, 503, 503, 503])
        let server = try scriptedCatalogServer(script)
        let clock = ManualAdClock()
        let (c, curl) = try client(server, clock: clock)
        do {
            _ = try await drive(clock) { try await c.loadAd(placementKey: "p", timeout: .milliseconds(2500)) }
            Issue.record("the load succeeded")
        } catch let error as AdError {
            #expect(error.code == .server(status: 503))
        }
        #expect(script.targets.count == 2, "at 0 s and after 1 s; a retry after 2 s more would pass the 2.5 s deadline")
        await curl.shutdown()
        server.stop()
    }

    /// Seed: 429 → "Respect Retry-After header".
    @Test func after429NoRequestGoesToTheEndpointBeforeRetryAfterPasses() async throws {
        let script = CatalogScript([429])
        let server = try scriptedCatalogServer(script, retryAfter: "30")
        let clock = ManualAdClock()
        let (c, curl) = try client(server, clock: clock)
        let first = await gcError { _ = try await c.loadAd(placementKey: "p") }
        #expect(first?.code == .rateLimited(retryAfter: .seconds(30)))
        await clock.advance(by: .seconds(10))
        let second = await gcError { _ = try await c.loadAd(placementKey: "p") }
        #expect(second?.code == .rateLimited(retryAfter: .seconds(20)), "the time left")
        #expect(second?.code.name == "rate_limited")
        #expect(script.targets.count == 1, "no request while rate limited")
        await clock.advance(by: .seconds(21))
        #expect(try await c.loadAd(placementKey: "p")?.creativeID == "cr")
        #expect(script.targets.count == 2)
        await curl.shutdown()
        server.stop()
    }

    /// "prefetchAdCatalogs warms entries that a later loadAd — with an appUserID, a session id and privacy
    /// signals — actually hits."
    @Test func aRewardedLoadAfterAPrefetchMakesNoCatalogRequest() async throws {
        let script = CatalogScript([])
        let server = try scriptedCatalogServer(script)
        let (c, curl) = try client(server, clock: ManualAdClock(), caching: true)
        let privacy = PrivacySignals(gdprApplies: true, tcfConsent: "CPx", usPrivacy: "1YNN")
        await c.prefetchAdCatalogs(placementKeys: ["p"], privacy: privacy)
        #expect(script.targets.count == 1)
        let ad = try await c.loadAd(placementKey: "p", appUserID: "u1", sessionID: "s1", privacy: privacy)
        #expect(ad?.creativeID == "cr")
        #expect(script.targets.count == 1, "served from the prefetched catalog")
        _ = try await c.loadAd(placementKey: "p", appUserID: "u1", privacy: PrivacySignals(gdprApplies: false))
        #expect(script.targets.count == 2, "other privacy signals are another entry")
        #expect(script.targets.last?.contains("app_user_id=u1") == true, "the user still travels on the wire")
        await curl.shutdown()
        server.stop()
    }
}

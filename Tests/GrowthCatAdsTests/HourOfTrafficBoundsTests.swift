import AdMediation
import AdMediationTesting
import AdNetworkConformance
import CurlTransport
import Foundation
import Logging
import TestSupport
import Testing

@testable import GrowthCatAds

/// One simulated hour of traffic from 100 distinct users, on the manual clock: what the client keeps in memory and
/// on disk stays under its bound the whole time (and reaches it, so the bound is what held it).
/// 1 200 loads over loopback, one after another: near 2 minutes under load, so the time limit (a hang guard) is 5.
@Suite("GrowthCat bounds over an hour of 100 users", .timeLimit(.minutes(5)))
struct HourOfTrafficBoundsTests {
    /// A consent string per user: every user's privacy signals differ, so each is a catalog cache key of its own.
    static func privacy(ofUser user: Int) -> PrivacySignals {
        var privacy = PrivacySignals()
        privacy.gdprApplies = true
        privacy.tcfConsent = "CPuser\(user)AAAA"
        return privacy
    }

    @Test func catalogCacheStaysUnderItsBound() async throws {
        let f = try await gcFixture()
        let placements = ["level_complete", "video_break", "home_banner"]
        var largest = 0
        // Every 5 simulated minutes each of the 100 users loads one of three placements: 300 distinct keys an hour.
        for minute in stride(from: 0, to: 60, by: 5) {
            for user in 0..<100 {
                _ = try await f.client.loadAd(
                    placementKey: placements[(user + minute / 5) % 3], appUserID: "u\(user)",
                    privacy: Self.privacy(ofUser: user))
                let count = await f.client.catalogCacheCount
                largest = max(largest, count)
                #expect(count <= GrowthCatClient.catalogCacheLimit, "minute \(minute), user \(user)")
            }
            await f.clock.advance(by: .seconds(300))
        }
        #expect(largest == GrowthCatClient.catalogCacheLimit, "the traffic reached the bound, so the bound held it")
        await f.close()
    }

    @Test func offlineEventQueueStaysUnderItsCap() async throws {
        let port = try LoopbackHTTPServer.refusingPort()  // nobody listens: every flush fails, the client is offline
        let curl = CurlHTTPClient()
        let clock = ManualAdClock()
        let logs = LogCapture()
        var configuration = GrowthCatClient.Configuration(
            apiKey: "k", baseURL: "http://127.0.0.1:\(port)", eventQueuePath: queuePath())
        configuration.logger = logs.logger(label: "admediation.growthcat")
        let client = try GrowthCatClient(configuration: configuration, http: curl, clock: clock)
        // Each of the 100 users has an ad event every 10 simulated minutes: 600 events an hour against a cap of 500.
        var largest = 0
        for minute in stride(from: 0, to: 60, by: 10) {
            for user in 0..<100 {
                try await client.trackAdEvent(.videoStart, for: gcAd(), placementKey: "p", appUserID: "u\(user)")
            }
            let pending = await client.pendingEventCount
            largest = max(largest, pending)
            #expect(pending <= 500, "minute \(minute)")
            await clock.advance(by: .seconds(600))
        }
        #expect(largest == 500, "the oldest events were dropped at the cap")
        #expect(
            logs.all.filter { $0.level == .warning }.count == 100,
            "each of the 100 drops past the cap was logged as a warning")
        await client.shutdown()
        await curl.shutdown()
    }
}

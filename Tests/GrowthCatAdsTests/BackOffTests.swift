import AdMediation
import AdMediationTesting
import Testing

@testable import GrowthCatAds

/// Issue 43 item 6. Seed, status codes: "5xx — retry with exponential backoff", "429 — back off".
@Suite("GrowthCat backs off as the seed says, on every path", .timeLimit(.minutes(1)))
struct BackOffTests {
    /// The end-of-presentation flush re-posted events at once after a 503, ignoring the delivery back-off: a flush
    /// joins the schedule and posts nothing before the back-off ends; after it, everything goes out.
    @Test func aFlushDuringTheDeliveryBackOffPostsNothing() async throws {
        let server = try ScriptedGrowthCat()
        server.script("/ads/events", [.init(status: 503)])
        let clock = ManualAdClock()
        let (client, curl) = try scriptedClient(server, clock: clock)
        defer { server.server.stop() }
        let ad = try #require(try await client.loadAd(placementKey: "p"))
        try await client.trackAdEvent(.impression, for: ad, placementKey: "p")
        #expect(await eventually { server.received("/ads/events").count == 1 })
        _ = await client.flushAdEvents()  // joins the delivery's flush that met the 503, or follows it

        let report = await client.flushAdEvents()  // the presentation ends: its flush

        guard case .backingOff(let until)? = report.stoppedBy else {
            Issue.record("the flush did not wait for the back-off: \(report)")
            await curl.shutdown()
            return
        }
        #expect(server.received("/ads/events").count == 1, "nothing re-posted before the back-off ends")
        #expect(report.remaining == 1)
        await clock.advance(to: until)
        #expect(await eventually { server.acceptedEventIDs.count == 1 })
        await curl.shutdown()
    }

    /// A catalog answering 429 without `Retry-After` was asked again at once by every load: the loads back off for
    /// a documented default (1 s, doubling with each 429 in a row), asking nothing meanwhile.
    @Test func aCatalog429WithoutRetryAfterBacksOffLoadsExponentially() async throws {
        let server = try ScriptedGrowthCat()
        server.script("/ads/catalog", [.init(status: 429), .init(status: 429)])
        let clock = ManualAdClock()
        let (client, curl) = try scriptedClient(server, clock: clock) { $0.catalogCaching = false }
        defer { server.server.stop() }
        func load() async -> AdError? {
            do {
                _ = try await client.loadAd(placementKey: "p")
                return nil
            } catch { return error }
        }
        #expect(await load()?.code.name == "rate_limited", "the first 429")
        #expect(await load()?.code.name == "rate_limited", "refused locally while the back-off runs")
        #expect(server.received("/ads/catalog").count == 1)
        await clock.advance(by: GrowthCatClient.rateLimitBackoff)
        #expect(await load()?.code.name == "rate_limited", "the second 429 in a row")
        #expect(server.received("/ads/catalog").count == 2)
        await clock.advance(by: GrowthCatClient.rateLimitBackoff)
        #expect(await load() != nil, "doubled: 2 s after the second 429")
        #expect(server.received("/ads/catalog").count == 2)
        await clock.advance(by: GrowthCatClient.rateLimitBackoff)
        #expect(await load() == nil, "the back-off over, the load fills")
        #expect(server.received("/ads/catalog").count == 3)
        await curl.shutdown()
    }
}

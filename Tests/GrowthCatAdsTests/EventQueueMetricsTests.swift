import AdMediation
import AdMediationTesting
import CurlTransport
import MetricsTestKit
import TestSupport
import Testing

@testable import GrowthCatAds

@Suite("GrowthCat event-queue metrics", .timeLimit(.minutes(2)))
struct EventQueueMetricsTests {
    @Test func queueDepthIsAGaugeAndDropsAtTheCapAreCounted() async throws {
        // Nobody listens: the client stays offline, events stay queued.
        let port = try LoopbackHTTPServer.refusingPort()
        let curl = CurlHTTPClient()
        let metrics = TestMetrics()
        var configuration = GrowthCatClient.Configuration(
            apiKey: "k", baseURL: "http://127.0.0.1:\(port)", eventQueuePath: queuePath())
        configuration.logger = LogCapture().logger(label: "admediation.growthcat")
        configuration.metrics = metrics
        let client = try GrowthCatClient(configuration: configuration, http: curl, clock: ManualAdClock())
        // The cap is for events queued offline (the seed): the client learns it is offline from a failed request.
        _ = try? await client.refreshSDKConfig()
        #expect(await client.isOffline)
        for _ in 0..<505 {
            try await client.trackAdEvent(.videoStart, for: gcAd(), placementKey: "p")
        }
        await client.shutdown()
        await curl.shutdown()
        let depth = try metrics.expectGauge("admediation_growthcat_event_queue_depth")
        #expect(depth.lastValue == 500)
        #expect(depth.values.max() == 500, "never above the cap")
        #expect(
            try metrics.expectCounter("admediation_growthcat_events_dropped_total", [("reason", "queue_full")])
                .totalValue == 5)
    }
}

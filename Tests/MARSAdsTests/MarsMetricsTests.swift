import AdMediationTesting
import CurlTransport
import MARSAds
import MetricsTestKit
import TestSupport
import Testing

@Suite("MARS metrics", .timeLimit(.minutes(1)))
struct MarsMetricsTests {
    @Test func cacheMissThenHitAreCountedByOutcome() async throws {
        let server = try cachingServer(cacheControl: "max-age=60")
        let curl = CurlHTTPClient()
        let metrics = TestMetrics()
        let client = MozAdsClientBuilder(httpClient: curl).environment(.custom(baseURL: server.baseURL + "/v1/"))
            .telemetry(MetricsMozAdsTelemetry(factory: metrics)).cacheConfig(.init(dbPath: tempDB())).build()
        _ = try await client.requestTileAds(p)
        _ = try await client.requestTileAds(p)
        _ = try await client.requestTileAds(p)
        await curl.shutdown()
        server.stop()
        #expect(
            try metrics.expectCounter("admediation_mars_cache_outcomes_total", [("outcome", "miss_stored")]).totalValue
                == 1)
        #expect(
            try metrics.expectCounter("admediation_mars_cache_outcomes_total", [("outcome", "hit")]).totalValue == 2)
        #expect(
            try metrics.expectCounter("admediation_mars_operations_total", [("operation", "request_ads")]).totalValue
                == 3)
    }

    @Test func aFailedRequestIsCountedAsAnErrorOfItsOperation() async throws {
        let server = try cachingServer(cacheControl: nil, status: 500)
        let curl = CurlHTTPClient()
        let metrics = TestMetrics()
        let logs = LogCapture()
        let client = MozAdsClientBuilder(httpClient: curl).environment(.custom(baseURL: server.baseURL + "/v1/"))
            .telemetry(MetricsMozAdsTelemetry(factory: metrics, logger: logs.logger(label: "admediation.mars"))).build()
        await #expect(throws: (any Error).self) { try await client.requestTileAds(p) }
        #expect(logs.all.map(\.message) == ["operation failed"])
        await curl.shutdown()
        server.stop()
        #expect(
            try metrics.expectCounter("admediation_mars_errors_total", [("operation", "request_ads")]).totalValue == 1)
    }
}

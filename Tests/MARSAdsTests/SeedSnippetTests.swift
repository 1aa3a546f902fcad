// The usage snippets of the MARS seed (`seeds/mozilla-ads-client-swift-api.md`), nearly verbatim, so that
// `swift build --build-tests` type-checks them against the library, and run against the demand sandbox where they make
// requests. The only differences, each documented in docs/SEEDS.md:
// - `MozAdsClientBuilder(httpClient: http)`: the builder takes the HTTP client it sends through;
// - `try await` on network calls (they are async here; the seed's cache-policy example also omits the `try`);
// - the seed's telemetry class writes to Glean; `AdsClientMetrics` below is a stand-in with Glean's labeled-metric
//   shape (`metric[label].set(value)`, `metric[label].add()`), so the class itself is the seed's, word for word;
// - where a snippet sends a request, the client is built with the seed's labels but pointed at the sandbox
//   (`.custom(baseURL:)`) instead of `.prod`, and OHTTP is configured on the builder ("OHTTP must be configured at the
//   viaduct level before use").
import AdMediation
import AdMediationTesting
import CurlTransport
import DemandSandbox
import Foundation
import MARSAds
import Testing

/// A stand-in for one Glean labeled metric: `metric[label].set(value)` (a labeled string) and `metric[label].add()`
/// (a labeled counter).
final class GleanLabeledMetricStandIn: Sendable {
    /// One label of the metric.
    struct Label {
        let metric: GleanLabeledMetricStandIn
        let label: String
        func set(_ value: String) { metric.values.withLock { $0[label] = value } }
        func add() { metric.counts.withLock { $0[label, default: 0] += 1 } }
    }

    let values = LockedValue<[String: String]>([:])
    let counts = LockedValue<[String: Int]>([:])
    subscript(label: String) -> Label { Label(metric: self, label: label) }
    func count(_ label: String) -> Int { counts.withLock { $0[label] ?? 0 } }
    func value(_ label: String) -> String? { values.withLock { $0[label] } }
}

/// Stands in for the Glean metrics (`AdsClientMetrics`, generated from the app's `metrics.yaml`) the seed's class uses.
enum AdsClientMetrics {
    static let buildCacheError = GleanLabeledMetricStandIn()
    static let clientError = GleanLabeledMetricStandIn()
    static let clientOperationTotal = GleanLabeledMetricStandIn()
    static let deserializationError = GleanLabeledMetricStandIn()
    static let httpCacheOutcome = GleanLabeledMetricStandIn()
}

// The seed's "Implementation Example", word for word (without `import MozillaRustComponents` and `import Glean`).
public final class AdsClientTelemetry: MozAdsTelemetry {
    public func recordBuildCacheError(label: String, value: String) {
        AdsClientMetrics.buildCacheError[label].set(value)
    }
    public func recordClientError(label: String, value: String) {
        AdsClientMetrics.clientError[label].set(value)
    }
    public func recordClientOperationTotal(label: String) {
        AdsClientMetrics.clientOperationTotal[label].add()
    }
    public func recordDeserializationError(label: String, value: String) {
        AdsClientMetrics.deserializationError[label].set(value)
    }
    public func recordHttpCacheOutcome(label: String, value: String) {
        AdsClientMetrics.httpCacheOutcome[label].set(value)
    }
}

/// The seed's snippets. Serialized: the seed's telemetry class writes to shared (static) metrics.
@Suite("MARS seed snippets", .serialized, .timeLimit(.minutes(1)))
struct SeedSnippetTests {
    /// `## MozAdsClient` → "Creating a Client", and `## MozAdsCacheConfig` → "Configuration Example" (also in
    /// "Configuring The Cache"). Building sends nothing, so the snippet runs as written, against `.prod`.
    @Test func theSeedsBuilderAndCacheConfigurationSnippetsBuildAClient() async throws {
        try await withCurlHTTPClient { http in
            let before = AdsClientMetrics.clientOperationTotal.count("new")
            let dbPath = tempDB()
            // --- seed ---
            let cache = MozAdsCacheConfig(
                dbPath: dbPath,  // the seed names a fixed file; here a temporary one made at run time
                defaultCacheTtlSeconds: 600,  // 10 min
                maxSizeMib: 20  // 20 MiB
            )
            let telemetry = AdsClientTelemetry()
            let client = MozAdsClientBuilder(httpClient: http)
                .environment(environment: .prod)
                .cacheConfig(cacheConfig: cache)
                .telemetry(telemetry: telemetry)
                .build()
            // --- end seed ---
            #expect(client.isCacheEnabled)
            #expect(AdsClientMetrics.clientOperationTotal.count("new") == before + 1, "the seed's telemetry records")
            try await client.clearCache()
            await client.shutdown()
        }
    }

    /// `## MozAdsClientBuilder`: "Sets the MARS environment (Prod, Staging, or Test)".
    @Test func theBuilderAcceptsTheSeedsThreeEnvironments() async throws {
        try await withCurlHTTPClient { http in
            for environment in [MozAdsEnvironment.prod, .staging, .test] {
                _ = MozAdsClientBuilder(httpClient: http).environment(environment: environment).build()
            }
        }
        #expect(MozAdsEnvironment.prod.url("ads") == "https://ads.mozilla.org/v1/ads")
        #expect(MozAdsEnvironment.staging.url("ads") == "https://ads.allizom.org/v1/ads")
        #expect(MozAdsEnvironment.test.url("ads") == "http://127.0.0.1:1234/ads")
    }

    /// A client built with the seed's labels, against the sandbox, with its OHTTP relay configured.
    static func seedClient(_ sandbox: RunningSandbox, _ http: CurlHTTPClient, cache: MozAdsCacheConfig? = nil)
        -> MozAdsClient
    {
        let builder = MozAdsClientBuilder(httpClient: http)
            .environment(environment: .custom(baseURL: sandbox.marsBaseURL))
            .telemetry(telemetry: AdsClientTelemetry())
            .ohttp(relayURL: sandbox.rootURL + "/ohttp/relay", keyConfigurationURL: sandbox.rootURL + "/ohttp/keys")
        return (cache.map { builder.cacheConfig(cacheConfig: $0) } ?? builder).build()
    }

    /// `## MozAdsClient` → "Methods": every method with the seed's labels and types, then the fields of
    /// `MozAdsTile`, `MozAdsImage`, `MozAdsSpoc`, `MozAdsSpocFrequencyCaps`, `MozAdsSpocRanking` and `MozAdsCallbacks`
    /// with the seed's types.
    @Test func theSeedsMethodsWithTheirLabelsRequestAdsAndRecordCallbacks() async throws {
        try await DemandSandbox.withSandbox { sandbox in
            try await withCurlHTTPClient { http in
                let client = Self.seedClient(sandbox, http, cache: MozAdsCacheConfig(dbPath: tempDB()))
                let content = MozAdsIABContent(taxonomy: .iab3_0, categoryIds: ["338"])
                let tileRequests = [MozAdsPlacementRequest(placementId: "mock_tile_1", iabContent: content)]
                let imageRequests = [MozAdsPlacementRequest(placementId: "mock_billboard_1", iabContent: nil)]
                let spocRequests = [
                    MozAdsPlacementRequestWithCount(count: 3, placementId: "mock_spoc_1", iabContent: nil)
                ]
                let options: MozAdsRequestOptions? = nil
                let callbackOptions: MozAdsCallbackOptions? = nil

                let tiles: [String: MozAdsTile] = try await client.requestTileAds(
                    mozAdRequests: tileRequests, options: options)
                let images: [String: MozAdsImage] = try await client.requestImageAds(
                    mozAdRequests: imageRequests, options: options)
                let spocs: [String: [MozAdsSpoc]] = try await client.requestSpocAds(
                    mozAdRequests: spocRequests, options: options)
                let tile = try #require(tiles["mock_tile_1"])
                let image = try #require(images["mock_billboard_1"])
                let spoc = try #require(spocs["mock_spoc_1"]?.first)
                #expect(spocs["mock_spoc_1"]?.count == 3)

                try await client.recordImpression(impressionUrl: tile.callbacks.impression, options: callbackOptions)
                try await client.recordClick(clickUrl: tile.callbacks.click, options: callbackOptions)
                let reportUrl = try #require(tile.callbacks.report)
                try await client.reportAd(reportUrl: reportUrl, reason: .notInterested, options: callbackOptions)
                try await client.clearCache()
                #expect(sandbox.marsRecords.callbacks.count == 3)
                #expect(sandbox.marsRecords.callbacks.last?.query["reason"] == "not_interested")

                let tileFields: (String, MozAdsCallbacks, String, String, String, String) = (
                    tile.blockKey, tile.callbacks, tile.format, tile.imageUrl, tile.name, tile.url
                )
                let imageFields: (String?, String, MozAdsCallbacks, String, String, String) = (
                    image.altText, image.blockKey, image.callbacks, image.format, image.imageUrl, image.url
                )
                let spocFields: (String, MozAdsCallbacks, MozAdsSpocFrequencyCaps, String, String, String) = (
                    spoc.blockKey, spoc.callbacks, spoc.caps, spoc.domain, spoc.excerpt, spoc.format
                )
                let moreSpocFields: (String, MozAdsSpocRanking, String, String?, String, String) = (
                    spoc.imageUrl, spoc.ranking, spoc.sponsor, spoc.sponsoredByOverride, spoc.title, spoc.url
                )
                let caps: (String, UInt32) = (spoc.caps.capKey, spoc.caps.day)
                let ranking: (UInt32, [String: UInt32], Double) = (
                    spoc.ranking.priority, spoc.ranking.personalizationModels, spoc.ranking.itemScore
                )
                let callbacks: (String, String, String?) = (
                    tile.callbacks.click, tile.callbacks.impression, tile.callbacks.report
                )
                #expect(!tileFields.0.isEmpty && !imageFields.1.isEmpty && !spocFields.0.isEmpty)
                #expect(!moreSpocFields.4.isEmpty && !caps.0.isEmpty && ranking.2.isFinite && !callbacks.0.isEmpty)
                await client.shutdown()
            }
        }
    }

    /// `## MozAdsCallbackOptions` → "OHTTP Usage Example".
    @Test func theSeedsOHTTPUsageExampleRequestsAndRecordsThroughTheRelay() async throws {
        try await DemandSandbox.withSandbox { sandbox in
            try await withCurlHTTPClient { http in
                let client = Self.seedClient(sandbox, http)
                let placements = [MozAdsPlacementRequest(placementId: "mock_tile_1", iabContent: nil)]
                // --- seed ---
                // Request ads over OHTTP
                let ads = try await client.requestTileAds(
                    mozAdRequests: placements, options: MozAdsRequestOptions(ohttp: true))
                // --- end seed ---
                let ad = try #require(ads["mock_tile_1"])
                // --- seed ---
                // Record a click over OHTTP
                try await client.recordClick(clickUrl: ad.callbacks.click, options: MozAdsCallbackOptions(ohttp: true))
                // Record an impression over OHTTP
                try await client.recordImpression(
                    impressionUrl: ad.callbacks.impression, options: MozAdsCallbackOptions(ohttp: true))
                // --- end seed ---
                let records = sandbox.records
                #expect(records.ohttpRelayed.count == 3, "the request and both callbacks went through the relay")
                #expect(sandbox.marsRecords.callbacks.count == 2)
                await client.shutdown()
            }
        }
    }

    /// `## MozAdsRequestCachePolicy` → "Per-Request Cache Policy Override Example": "Always fetch from network but only
    /// cache for 60 seconds".
    @Test func theSeedsCachePolicyOverrideExampleAlwaysFetchesAndCachesForSixtySeconds() async throws {
        try await DemandSandbox.withSandbox { sandbox in
            try await withCurlHTTPClient { http in
                let client = Self.seedClient(sandbox, http, cache: MozAdsCacheConfig(dbPath: tempDB()))
                let configs = [MozAdsPlacementRequest(placementId: "mock_billboard_1", iabContent: nil)]
                // --- seed ---
                // Always fetch from network but only cache for 60 seconds
                let options = MozAdsRequestOptions(
                    cachePolicy: MozAdsRequestCachePolicy(mode: .networkFirst, ttlSeconds: 60)
                )
                // Use it when requesting ads
                let placements = try await client.requestImageAds(configs, options: options)
                // --- end seed ---
                _ = try await client.requestImageAds(configs, options: options)
                #expect(placements["mock_billboard_1"] != nil)
                #expect(sandbox.records.requestCounts["POST /mars/v1/ads"] == 2, "networkFirst always fetches")
                _ = try await client.requestImageAds(mozAdRequests: configs, options: nil)
                #expect(
                    sandbox.records.requestCounts["POST /mars/v1/ads"] == 2, "and cached: a cacheFirst request hits")
                await client.shutdown()
            }
        }
    }

    /// `## MozAdsCacheMode`, `## MozAdsIABContentTaxonomy`, `## MozAdsReportReason` values, and the request types'
    /// memberwise shapes as the seed declares them.
    @Test func theSeedsValueTypesHaveItsShapes() {
        let modes: [MozAdsCacheMode] = [.cacheFirst, .networkFirst]
        let taxonomies: [MozAdsIABContentTaxonomy] = [.iab1_0, .iab2_0, .iab2_1, .iab2_2, .iab3_0]
        let request = MozAdsPlacementRequest(
            placementId: "p", iabContent: MozAdsIABContent(taxonomy: .iab2_1, categoryIds: ["1"]))
        let withCount = MozAdsPlacementRequestWithCount(count: 2, placementId: "s", iabContent: nil)
        let policy = MozAdsRequestCachePolicy(mode: .cacheFirst, ttlSeconds: nil)
        let options = MozAdsRequestOptions(cachePolicy: policy, ohttp: false)
        let config = MozAdsCacheConfig(dbPath: tempDB(), defaultCacheTtlSeconds: nil, maxSizeMib: nil)
        let typed: (String, MozAdsIABContent?, UInt32, MozAdsRequestCachePolicy?, Bool, UInt64?, UInt64?, Bool) = (
            request.placementId, request.iabContent, withCount.count, options.cachePolicy, options.ohttp,
            config.defaultCacheTtlSeconds, config.maxSizeMib, MozAdsCallbackOptions(ohttp: false).ohttp
        )
        #expect(
            modes.count == 2 && taxonomies.map(\.rawValue) == ["IAB-1.0", "IAB-2.0", "IAB-2.1", "IAB-2.2", "IAB-3.0"])
        #expect(typed.0 == "p" && typed.2 == 2 && policy.ttlSeconds == nil)
    }
}

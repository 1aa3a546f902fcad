// A new-tab page's ads from MARS against the demand sandbox: tiles, sponsored stories and a billboard, the SQLite
// cache answering the second request, then impression, click and report callbacks. Prints what happened. Written in
// the seed's spelling (`environment(environment:)`, `requestTileAds(mozAdRequests:options:)`, …).
import AdMediation
import CurlTransport
import DemandSandbox
import Foundation
import MARSAds
import MARSSandbox

/// Prints every telemetry call.
struct PrintingTelemetry: MozAdsTelemetry {
    func recordHttpCacheOutcome(label: String, value: String) { print("  telemetry: cache \(label)") }
    func recordClientOperationTotal(label: String) { print("  telemetry: operation \(label)") }
    func recordDeserializationError(label: String, value: String) { print("  telemetry: dropped an item (\(value))") }
    func recordClientError(label: String, value: String) { print("  telemetry: error \(label): \(value)") }
    func recordBuildCacheError(label: String, value: String) { print("  telemetry: cache disabled (\(label))") }
}

let sandbox = try await DemandSandbox.start()
let http = CurlHTTPClient()
let cachePath = NSTemporaryDirectory() + "mars-newtab-\(UUID().uuidString).sqlite"
let client = MozAdsClientBuilder(httpClient: http)
    .environment(environment: .custom(baseURL: sandbox.marsBaseURL))
    .cacheConfig(cacheConfig: MozAdsCacheConfig(dbPath: cachePath, defaultCacheTtlSeconds: 600, maxSizeMib: 10))
    .telemetry(telemetry: PrintingTelemetry())
    .build()

let tilePlacements = [
    MozAdsPlacementRequest(placementId: "mock_tile_1"), MozAdsPlacementRequest(placementId: "mock_tile_2"),
]
print("requesting two tiles")
let tiles = try await client.requestTileAds(mozAdRequests: tilePlacements, options: nil)
for (placement, tile) in tiles.sorted(by: { $0.key < $1.key }) { print("  \(placement): \(tile.name) → \(tile.url)") }
print("requesting the same tiles again")
_ = try await client.requestTileAds(mozAdRequests: tilePlacements, options: nil)
print("  the sandbox saw \(sandbox.records.requestCounts["POST /mars/v1/ads"] ?? 0) ad request(s)")

print("requesting three sponsored stories (IAB 3.0 category 338)")
let spocs = try await client.requestSpocAds(
    mozAdRequests: [
        MozAdsPlacementRequestWithCount(
            count: 3, placementId: "mock_spoc_1",
            iabContent: MozAdsIABContent(taxonomy: .iab3_0, categoryIds: ["338"]))
    ], options: nil)
for spoc in spocs["mock_spoc_1"] ?? [] {
    print("  #\(spoc.ranking.priority) \(spoc.title) by \(spoc.sponsor) (cap \(spoc.caps.capKey))")
}

print("requesting a billboard with the contextual flag")
let images = try await client.requestImageAds(
    mozAdRequests: [MozAdsPlacementRequest(placementId: "mock_billboard_1")],
    options: MozAdsRequestOptions(flags: ["contextual_placement": true]))
if let billboard = images["mock_billboard_1"] {
    print("  \(billboard.format): \(billboard.altText ?? "") → \(billboard.imageUrl)")
}

if let story = spocs["mock_spoc_1"]?.first {
    print("callbacks for the first story")
    try await client.recordImpression(impressionUrl: story.callbacks.impression, options: nil)
    try await client.recordClick(clickUrl: story.callbacks.click, options: nil)
    if let report = story.callbacks.report {
        try await client.reportAd(reportUrl: report, reason: .notInterested, options: nil)
    }
    for callback in (sandbox.routes(MarsRoutes.self)?.records.callbacks ?? []) {
        print(
            "  GET \(callback.path)?"
                + callback.query.sorted { $0.key < $1.key }.map { "\($0)=\($1)" }.joined(separator: "&"))
    }
}
try await client.clearCache()
await client.shutdown()
await http.shutdown()
await sandbox.shutdown()
try? FileManager.default.removeItem(atPath: cachePath)

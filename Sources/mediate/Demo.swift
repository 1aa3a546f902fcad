import BuiltInNetworks
import DemandSandbox
import Foundation
import MediateKit

/// The built-in demo: a sandbox scenario and a configuration covering the adapters of this build.
enum Demo {
    static let scenario = SandboxScenario(
        seed: 2026,
        networks: [
            "mars": NetworkScenario(
                fillRate: 0.8, latencyMs: .logNormal(median: 12, sigma: 0.6),
                faults: [Fault(.status, rate: 0.02, status: 503)]),
            "chartboost": NetworkScenario(
                fillRate: 0.7, ecpm: .logNormal(median: 1.5, sigma: 0.5), latencyMs: .logNormal(median: 20, sigma: 0.5),
                faults: [Fault(.status, rate: 0.03, status: 429, retryAfterS: 2), Fault(.malformedJSON, rate: 0.01)]),
            "appopen": NetworkScenario(
                fillRate: 0.6, ecpm: .uniform(min: 2, max: 8), latencyMs: .uniform(min: 5, max: 40),
                faults: [Fault(.reset, rate: 0.01)]),
            "growthcat": NetworkScenario(fillRate: 0.75, latencyMs: .logNormal(median: 15, sigma: 0.5)),
        ],
        placements: [
            "mars/mock_tile_2": NetworkScenario(fillRate: 0.3, latencyMs: .fixed(8))
        ])

    /// Every built-in network with a sample line, as its sample configures it against `sandbox`, keyed by its type:
    /// the demo's `networks` (its placements name them by type).
    static func networksJSON(_ sandbox: RunningSandbox) -> String {
        var networks: [String: [String: String]] = [:]
        for entry in BuiltInNetworks.samples {
            var object = entry.sample?.settings ?? [:]
            object["type"] = entry.factory.type
            object["base_url"] = entry.sampleBaseURL(rootURL: sandbox.rootURL)
            networks[entry.factory.type] = object
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(networks)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    /// The demo configuration as JSON, pointing at a running sandbox.
    static func configuration(_ sandbox: RunningSandbox) -> Data {
        let json = """
            {
              "networks": \(networksJSON(sandbox)),
              "placements": {
                "home_tile": { "format": "tile", "ab_label": "tiles-a", "lines": [
                  { "network": "mars", "placement": "mock_tile_2", "timeout_ms": 200, "ecpm": 0.9 },
                  { "network": "mars", "placement": "mock_tile_1", "timeout_ms": 300, "ecpm": 0.6 } ] },
                "feed_story": { "format": "spoc", "lines": [
                  { "network": "mars", "placement": "mock_spoc_1", "timeout_ms": 300 } ] },
                "main_banner": { "format": "banner", "size": "320x50", "lines": [
                  { "network": "chartboost", "placement": "Main Menu", "floor_ecpm": 1.0, "timeout_ms": 400 },
                  { "network": "chartboost", "placement": "Level Complete", "timeout_ms": 400 } ] },
                "level_end": { "format": "interstitial", "lines": [
                  { "network": "growthcat", "placement": "video_break", "floor_ecpm": 2.0, "timeout_ms": 400 },
                  { "network": "growthcat", "placement": "level_complete", "timeout_ms": 400 } ] },
                "rewarded_coins": { "format": "rewarded", "lines": [
                  { "network": "growthcat", "placement": "rewarded_coins", "timeout_ms": 500 } ] },
                "main_banner_gc": { "format": "banner", "size": "320x50", "lines": [
                  { "network": "chartboost", "placement": "Main Menu", "floor_ecpm": 1.5, "timeout_ms": 400 },
                  { "network": "growthcat", "placement": "home_banner", "timeout_ms": 400 } ] },
                "launch": { "format": "app_open", "mode": "sequential", "lines": [
                  { "network": "appopen", "placement": "ca-app-pub-sandbox/app_open_main", "timeout_ms": 300 },
                  { "network": "appopen", "placement": "ca-app-pub-3940256099942544/5575463023", "timeout_ms": 300 } ] }
              }
            }
            """
        return Data(json.utf8)
    }

    /// The arms demo's prices drift after this many Chartboost requests.
    static let driftAfter = 2000

    /// The arms demo (`--demo arms`): a banner waterfall whose prices drift, and a banner auction with two bidders.
    ///
    /// `drift_banner` is a sequential waterfall ordered by the initial eCPMs (premium 4.0 → standard 2.5 → remnant
    /// 1.0, each line's floor just under its price). After ``driftAfter`` Chartboost requests the premium demand
    /// falls to 1.0 (under its floor, so it stops filling) and the remnant demand rises to 5.0: the static order is
    /// now wrong. `auction_banner` has the same standard and remnant lines (before drift), and two bidders.
    static let armsScenario = SandboxScenario(
        seed: 18,
        networks: [
            "chartboost": NetworkScenario(latencyMs: .logNormal(median: 6, sigma: 0.4)),
            "rtb-a": NetworkScenario(
                fillRate: 0.7, ecpm: .logNormal(median: 2.2, sigma: 0.4), latencyMs: .logNormal(median: 8, sigma: 0.4)),
            "rtb-b": NetworkScenario(
                fillRate: 0.5, ecpm: .logNormal(median: 2.8, sigma: 0.5), latencyMs: .logNormal(median: 10, sigma: 0.4),
                faults: [Fault(.status, rate: 0.01, status: 503)]),
        ],
        placements: [
            "chartboost/Premium": NetworkScenario(
                fillRate: 0.5, ecpm: .uniform(min: 3.8, max: 4.2), latencyMs: .logNormal(median: 6, sigma: 0.4),
                drift: [DriftPhase(afterRequests: driftAfter, ecpm: .uniform(min: 0.9, max: 1.1))]),
            "chartboost/Standard": NetworkScenario(
                fillRate: 0.6, ecpm: .uniform(min: 2.4, max: 2.6), latencyMs: .logNormal(median: 6, sigma: 0.4)),
            "chartboost/Remnant": NetworkScenario(
                fillRate: 0.9, ecpm: .uniform(min: 0.9, max: 1.1), latencyMs: .logNormal(median: 6, sigma: 0.4),
                drift: [DriftPhase(afterRequests: driftAfter, ecpm: .uniform(min: 4.8, max: 5.2))]),
            "chartboost/Fixed": NetworkScenario(
                fillRate: 0.6, ecpm: .uniform(min: 1.4, max: 1.6), latencyMs: .logNormal(median: 6, sigma: 0.4)),
        ])

    /// The arms demo's configuration, pointing at a running sandbox.
    static func armsConfiguration(_ sandbox: RunningSandbox) -> Data {
        let json = """
            {
              "networks": {
                "chartboost": { "type": "chartboost", "base_url": "\(sandbox.chartboostBaseURL)", "app_id": \
            "cb_app_demo", "app_signature": "cb_sig_demo_secret" },
                "rtb-a": { "type": "openrtb", "base_url": "\(sandbox.bidderBaseURL("rtb-a"))", "app_bundle": \
            "com.example.demo" },
                "rtb-b": { "type": "openrtb", "base_url": "\(sandbox.bidderBaseURL("rtb-b"))", "app_bundle": \
            "com.example.demo" }
              },
              "placements": {
                "drift_banner": { "format": "banner", "size": "320x50", "mode": "sequential",
                  "optimizer": { "exploration": 0.1, "half_life_requests": 500, "seed": 18 },
                  "lines": [
                    { "network": "chartboost", "placement": "Premium", "floor_ecpm": 3.5, "timeout_ms": 300 },
                    { "network": "chartboost", "placement": "Standard", "floor_ecpm": 2.0, "timeout_ms": 300 },
                    { "network": "chartboost", "placement": "Remnant", "floor_ecpm": 0.5, "timeout_ms": 300 } ] },
                "auction_banner": { "format": "banner", "size": "320x50", "mode": "sequential",
                  "bidders": [
                    { "network": "rtb-a", "placement": "auction_banner", "timeout_ms": 300 },
                    { "network": "rtb-b", "placement": "auction_banner", "timeout_ms": 300 } ],
                  "lines": [
                    { "network": "chartboost", "placement": "Standard", "floor_ecpm": 2.0, "timeout_ms": 300 },
                    { "network": "chartboost", "placement": "Fixed", "floor_ecpm": 1.0, "timeout_ms": 300 } ] }
              }
            }
            """
        return Data(json.utf8)
    }
}

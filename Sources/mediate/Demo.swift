import DemandSandbox
import Foundation
import MediateKit

/// The built-in demo: a sandbox scenario and a configuration covering the adapters of this build.
enum Demo {
    static let scenario = SandboxScenario(
        seed: 2026,
        networks: [
            "mars": NetworkScenario(fillRate: 0.8, latencyMs: .logNormal(median: 12, sigma: 0.6),
                                    faults: [Fault(.status, rate: 0.02, status: 503)]),
            "chartboost": NetworkScenario(fillRate: 0.7, ecpm: .logNormal(median: 1.5, sigma: 0.5), latencyMs: .logNormal(median: 20, sigma: 0.5),
                                          faults: [Fault(.status, rate: 0.03, status: 429, retryAfterS: 2), Fault(.malformedJSON, rate: 0.01)]),
            "appopen": NetworkScenario(fillRate: 0.6, ecpm: .uniform(min: 2, max: 8), latencyMs: .uniform(min: 5, max: 40),
                                       faults: [Fault(.reset, rate: 0.01)]),
            "growthcat": NetworkScenario(fillRate: 0.75, latencyMs: .logNormal(median: 15, sigma: 0.5)),
        ],
        placements: [
            "mars/mock_tile_2": NetworkScenario(fillRate: 0.3, latencyMs: .fixed(8)),
        ])

    /// The demo configuration as JSON, pointing at a running sandbox.
    static func configuration(_ sandbox: RunningSandbox) -> Data {
        let json = """
        {
          "networks": {
            "mars": { "type": "mars", "base_url": "\(sandbox.marsBaseURL)" },
            "chartboost": { "type": "chartboost", "base_url": "\(sandbox.chartboostBaseURL)", "app_id": "cb_app_demo", "app_signature": "cb_sig_demo_secret" },
            "appopen": { "type": "appopen", "base_url": "\(sandbox.appOpenBaseURL)" },
            "growthcat": { "type": "growthcat", "base_url": "\(sandbox.growthcatBaseURL)", "api_key": "gc_test_demo", "catalog_cache": "false" }
          },
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
}

import Foundation
import Testing

/// Issue 47 item 5: each network's own settings list every problem they have (every setting, a nested object's keys
/// included), not the first of each network.
@Suite("mediate: every problem of every network's settings", .serialized, .timeLimit(.minutes(2)))
struct SettingsProblemsCLITests {
    @Test func everyProblemOfEveryNetworksSettingsIsListedByTheBinary() async throws {
        let config = try writeConfig(
            """
            {"networks": {
               "cb": {"type": "chartboost", "base_url": "http://127.0.0.1:9/"},
               "gc": {"type": "growthcat", "base_url": "http://127.0.0.1:9/", "catalog_cache": "maybe"},
               "m": {"type": "mars", "base_url": "http://127.0.0.1:9/", "cache_ttl_s": 0, "cache_max_mib": 500,
                 "ohttp": {"relay": "not a url", "config": "http://127.0.0.1:9/c", "relai": "x"}},
               "rtb": {"type": "openrtb", "base_url": "http://127.0.0.1:9/", "app_id": true, "auction": "third"}},
             "placements": {"t": {"format": "tile", "lines": [{"network": "m", "placement": "x"}]}}}
            """)
        let run = try await mediate(["compare", "--config", config, "--requests", "1"])
        #expect(run.code == 2, "\(run.err)")
        for problem in [
            "networks.cb.app_id: required for type chartboost",
            "networks.cb.app_signature: required for type chartboost",
            "networks.gc.api_key: required for type growthcat",
            "networks.gc.catalog_cache: must be true or false",
            #"networks.m.cache_ttl_s: must be a whole number 1…604800, got "0""#,
            #"networks.m.cache_max_mib: must be a whole number 1…100, got "500""#,
            #"networks.m.ohttp.relai: unknown key; did you mean "relay"?"#,
            "networks.m.ohttp.relay: required, an absolute URL",
            "networks.rtb.app_id: expected a string or a number, found a boolean",
            #"networks.rtb.auction: must be first_price or second_price, got "third""#,
        ] {
            #expect(run.err.contains("error: " + problem + "\n"), "\(problem): \(run.err)")
        }
        #expect(run.err.contains("error: 10 problems in the configuration; nothing was sent"), "\(run.err)")
    }

    @Test func aMisspeltNestedSettingIsOneProblemNotAlsoAMissingOne() {
        let problems = DecodeProblemsCLITests.problems(
            """
            {"networks": {"m": {"type": "mars", "base_url": "http://127.0.0.1:9/",
               "ohttp": {"relai": "http://127.0.0.1:9/r", "confg": "http://127.0.0.1:9/c"}}},
             "placements": {"t": {"format": "tile", "lines": [{"network": "m", "placement": "x"}]}}}
            """)
        #expect(
            problems == [
                #"networks.m.ohttp.confg: unknown key; did you mean "config"?"#,
                #"networks.m.ohttp.relai: unknown key; did you mean "relay"?"#,
            ])
    }
}

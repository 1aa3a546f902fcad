import DemandSandbox
import Foundation
import Testing

/// Issue 47 item 6: `mediate list` shows the configured placements (lines, formats) and networks (type, base URL),
/// secrets hidden, in text and JSON.
@Suite("mediate list", .serialized, .timeLimit(.minutes(2)))
struct ListCommandTests {
    static let config = """
        {"networks": {
           "ao": {"type": "appopen", "base_url": "http://127.0.0.1:9/ao?token=t0psecret"},
           "cb": {"type": "chartboost", "base_url": "http://127.0.0.1:9/cb", "app_id": "cb_app_x", \
        "app_signature": "s3cret-signature"}},
         "placements": {
           "launch": {"format": "app_open", "lines": [{"network": "ao", "placement": "ca-app-pub-1/2", \
        "timeout_ms": 2000}]},
           "banner": {"format": "banner", "size": "320x50", "lines": [{"network": "cb", "placement": "Main Menu", \
        "timeout_ms": 1500}]}}}
        """

    @Test func theTextListsEachPlacementWithItsLinesAndEachNetworkWithItsTypeAndBaseURL() async throws {
        let run = try await mediate(["list", "--config", try writeConfig(Self.config)])
        #expect(run.code == 0, "\(run.err)")
        #expect(run.out.contains("placements (2):"), "\(run.out)")
        #expect(run.out.contains("  banner  banner(320x50)"), "\(run.out)")
        #expect(run.out.contains("1. line cb/Main Menu  timeout 1500 ms"), "\(run.out)")
        #expect(run.out.contains("  launch  app_open"), "\(run.out)")
        #expect(run.out.contains("networks (2):"), "\(run.out)")
        #expect(run.out.contains("  cb  chartboost  http://127.0.0.1:9/cb"), "\(run.out)")
        #expect(run.out.contains("settings: app_id, app_signature (values hidden)"), "\(run.out)")
    }

    @Test func theJSONHasThePlacementsAndTheNetworks() async throws {
        let run = try await mediate(["list", "--config", try writeConfig(Self.config), "--json"])
        let root = try #require(try JSONSerialization.jsonObject(with: Data(run.out.utf8)) as? [String: Any])
        let placements = try #require(root["placements"] as? [[String: Any]], "\(run.out)\(run.err)")
        #expect(placements.map { $0["id"] as? String } == ["banner", "launch"])
        let line = try #require((placements.first?["lines"] as? [[String: Any]])?.first)
        #expect(line["network"] as? String == "cb" && line["timeout_ms"] as? Int == 1500)
        let networks = try #require(root["networks"] as? [[String: Any]])
        #expect(networks.map { $0["type"] as? String } == ["appopen", "chartboost"])
        #expect(networks.last?["formats"] as? [String] == ["banner"])
    }

    @Test func secretsAreNeverPrinted() async throws {
        let config = try writeConfig(Self.config)
        for arguments in [["list", "--config", config], ["list", "--config", config, "--json"]] {
            let run = try await mediate(arguments)
            #expect(run.code == 0, "\(run.err)")
            for secret in ["s3cret-signature", "t0psecret", "cb_app_x"] {
                #expect(!run.out.contains(secret), "\(arguments): \(secret) printed")
            }
            #expect(run.out.contains("token=***"), "the query's key is kept, its value hidden: \(run.out)")
        }
    }
}

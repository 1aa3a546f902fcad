import AdMediationTesting
import DemandSandbox
import Foundation
import Testing

/// Issue 47 item 4: `load` as a debugger — its text columns aligned, its output written where asked.
@Suite("mediate load: output", .serialized, .timeLimit(.minutes(2)))
struct LoadOutputTests {
    /// Where the outcome column starts in each of the trace's rows (after the source and two spaces or more).
    static func outcomeColumns(_ text: String) -> [Int] {
        text.split(separator: "\n").dropFirst().compactMap { row -> Int? in
            let characters = Array(row)
            guard
                let gap = (2..<max(2, characters.count - 1)).first(where: {
                    characters[$0] == " " && characters[$0 + 1] == " "
                })
            else { return nil }
            return characters[gap...].firstIndex { $0 != " " }
        }
    }

    @Test func theTextColumnsAreAlignedAcrossLines() async throws {
        let sandbox = try await DemandSandbox.start()
        let config = try writeConfig(
            """
            {"networks": {"cb": {"type": "chartboost", "base_url": "\(sandbox.chartboostBaseURL)", \
            "app_id": "cb_app_demo", "app_signature": "cb_sig_demo_secret"}},
             "placements": {"banner": {"format": "banner", "size": "320x50", "lines": [
               {"network": "cb", "placement": "Main Menu", "timeout_ms": 20000},
               {"network": "cb", "placement": "Level Complete", "timeout_ms": 20000}]}}}
            """)
        let run = try await mediate(["load", "--config", config, "--placement", "banner"])
        await sandbox.shutdown()
        #expect(run.code == 0, "\(run.err)")
        let columns = Self.outcomeColumns(run.out)
        #expect(columns.count == 2, "\(run.out)")
        #expect(Set(columns).count == 1, "the outcomes start in one column: \(run.out)")
    }

    @Test func outputWritesTheTraceToTheFileInTheFormatOfItsExtension() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("load-\(UUID().uuidString).json").path
        let sandbox = try await DemandSandbox.start()
        let config = try writeConfig(sandboxConfig(sandbox))
        let run = try await mediate(["load", "--config", config, "--placement", "launch", "--output", path])
        await sandbox.shutdown()
        #expect(run.code == 0, "\(run.err)")
        #expect(run.out.isEmpty, "nothing on stdout: \(run.out)")
        let root = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
        #expect(root["placement"] as? String == "launch")
    }
}

/// Issue 47 item 4: `load --format html`'s timeline and table are one model.
@Suite("mediate load: the timeline and the table agree", .serialized, .timeLimit(.minutes(2)))
struct LoadOneModelTests {
    /// An app-open server filling placement `fast` at once and never answering `slow`: in a parallel waterfall the
    /// `slow` line is cancelled once `fast` fills.
    @Test func aCancelledLineIsSkippedInTheTimelineAsInTheTable() async throws {
        let box = ServerURL()
        let server = try LoopbackHTTPServer { request in
            guard request.path == "/appopen/v1/ad" else { return .respond(.text("")) }
            if request.target.contains("slow") { return .silent }
            let object: [String: Any] = [
                "ad_id": "a1", "creative": ["type": "image", "url": "\(box.value)/img.png", "headline": "h"],
                "tracking": ["impression": "\(box.value)/imp", "click": "\(box.value)/click"], "ecpm": 1.0,
            ]
            let body = (try? JSONSerialization.data(withJSONObject: object)) ?? Data()
            return .respond(.init(headers: [("Content-Type", "application/json")], body: Array(body)))
        }
        box.set(server.baseURL)
        defer { server.stop() }
        let config = try writeConfig(
            """
            {"networks": {"ao": {"type": "appopen", "base_url": "\(server.baseURL)"}},
             "placements": {"launch": {"format": "app_open", "lines": [
               {"network": "ao", "placement": "fast", "timeout_ms": 5000},
               {"network": "ao", "placement": "slow", "timeout_ms": 5000}]}}}
            """)
        let run = try await mediate(["load", "--config", config, "--placement", "launch", "--format", "html"])
        #expect(run.code == 0, "\(run.err)")
        #expect(run.out.contains(#"<td data-field="outcome">skipped</td>"#), "the table: \(run.out)")
        #expect(run.out.contains("<title>ao/slow skipped"), "the timeline says the same: \(run.out)")
    }
}

/// Issue 47 item 4: `load --bodies` shows each HTTP exchange with its bodies, the user's ids and the configured
/// secrets redacted. Against a sandbox of its own with long line timeouts (the demo's 400–500 ms can pass on a busy
/// machine).
@Suite("mediate load --bodies", .serialized, .timeLimit(.minutes(2)))
struct LoadBodiesTests {
    @Test func eachExchangeIsShownWithItsBodiesAndTheUserIDRedacted() async throws {
        let sandbox = try await DemandSandbox.start()
        let config = try writeConfig(
            """
            {"networks": {"gc": {"type": "growthcat", "base_url": "\(sandbox.growthcatBaseURL)", \
            "api_key": "gc_test_demo", "catalog_cache": "false"}},
             "placements": {"coins": {"format": "rewarded", "lines": [{"network": "gc", "placement": \
            "rewarded_coins", "timeout_ms": 20000}]}}}
            """)
        let run = try await mediate([
            "load", "--config", config, "--placement", "coins", "--bodies", "--app-user-id", "user-secret-42",
        ])
        await sandbox.shutdown()
        #expect(run.code == 0, "\(run.err)")
        #expect(run.out.contains("HTTP exchanges ("), "\(run.out)")
        #expect(run.out.contains("/growthcat/v1/ads/catalog?placement_key=rewarded_coins&app_user_id=<redacted> → 200"))
        #expect(run.out.contains(#"response ("#) && run.out.contains(#"{"ads":["#), "\(run.out)")
        #expect(!run.out.contains("user-secret-42") && !run.out.contains("gc_test_demo"), "\(run.out)")
    }

    @Test func theJSONHasTheExchangesWithTheSecretsRedacted() async throws {
        let sandbox = try await DemandSandbox.start()
        let config = try writeConfig(sandboxConfig(sandbox))
        let run = try await mediate(["load", "--config", config, "--placement", "banner", "--bodies", "--json"])
        await sandbox.shutdown()
        let root = try #require(try JSONSerialization.jsonObject(with: Data(run.out.utf8)) as? [String: Any])
        let exchanges = try #require(root["exchanges"] as? [[String: Any]], "\(run.out)")
        let first = try #require(exchanges.first)
        #expect(first["method"] as? String == "POST" && first["status"] as? Int == 200, "\(first)")
        let bodies = exchanges.compactMap { $0["request_body"] as? String }
        #expect(bodies.contains { $0.contains(#""location":""#) }, "\(exchanges)")
        for secret in ["cb_sig_demo_secret", "cb_app_demo"] { #expect(!run.out.contains(secret), "\(secret)") }
    }
}

import DemandSandbox
import Foundation
import Testing

/// Issue 47 item 1: a waterfall the privacy rules blocked filled 0 % with no word of why in the report (only a note on
/// stderr). The table, the JSON and the HTML count the requests under `privacy_blocked` and name the reason, the
/// rules' row and the signal it reads.
@Suite("mediate compare says why a privacy-blocked waterfall did not fill", .serialized, .timeLimit(.minutes(2)))
struct PrivacyBlockedReportTests {
    /// `compare` of the sandbox config's `launch` under GDPR without a TC string, with `extra` arguments.
    static func blockedCompare(_ extra: [String]) async throws -> (code: Int32, out: String, err: String) {
        let sandbox = try await DemandSandbox.start()
        let config = try writeConfig(sandboxConfig(sandbox))
        let run = try await mediate(
            ["compare", "--config", config, "--placement", "launch", "--requests", "4", "--quiet", "--gdpr", "1"]
                + extra)
        await sandbox.shutdown()
        return run
    }

    @Test func theTableNamesTheReasonTheRuleAndTheSignalOfTheBlockedRequests() async throws {
        let run = try await Self.blockedCompare([])
        #expect(run.code == 0, "\(run.err)")
        #expect(run.out.contains("not sent (the privacy rules blocked them):"), "\(run.out)")
        let flat = run.out.replacingOccurrences(of: "\n    ", with: " ")
        #expect(
            flat.contains(
                "launch waterfall: 4 of 4 requests not sent (privacy_blocked): gdpr applies without a tcf string; "
                    + "rule \"gdpr, no string\""), "\(run.out)")
        #expect(flat.contains("given: --gdpr 1"), "\(run.out)")
        #expect(
            run.out.split(separator: "\n").allSatisfy { $0.count <= 80 },
            "the table stays within 80 columns: \(run.out)")
    }

    @Test func theJSONCountsTheBlockedRequestsWithTheRuleAndTheSignal() async throws {
        let run = try await Self.blockedCompare(["--format", "json"])
        let root = try #require(
            try JSONSerialization.jsonObject(with: Data(run.out.utf8)) as? [String: Any], "\(run.out)\(run.err)")
        let placement = try #require((root["placements"] as? [[String: Any]])?.first)
        #expect((placement["errors"] as? [String: Int])?["privacy_blocked"] == 4)
        let blocked = try #require(placement["privacy_blocked"] as? [String: Any], "\(placement)")
        #expect(blocked["requests"] as? Int == 4)
        #expect(blocked["given"] as? [String] == ["--gdpr 1"])
        let reason = try #require((blocked["reasons"] as? [[String: Any]])?.first)
        #expect(reason["reason"] as? String == "gdpr applies without a tcf string")
        #expect(reason["rule"] as? String == "gdpr, no string")
        #expect((reason["signal"] as? String)?.contains("--tcf") == true, "\(reason)")
        let line = try #require((placement["lines"] as? [[String: Any]])?.first)
        #expect((line["privacy_blocked"] as? [String: Any])?["requests"] as? Int == 4, "the line alone too: \(line)")
    }

    @Test func theHTMLReportSaysWhyTheWaterfallDidNotFill() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("blocked-\(UUID().uuidString).html")
            .path
        let run = try await Self.blockedCompare(["--format", "html", "--output", path])
        #expect(run.code == 0, "\(run.err)")
        let html = try String(contentsOfFile: path, encoding: .utf8)
        #expect(html.contains("data-field=\"privacy_blocked\" data-source=\"waterfall\""), "\(html.prefix(2000))")
        #expect(html.contains("4 of 4 requests not sent (privacy_blocked): gdpr applies without a tcf string"))
        #expect(html.contains("rule &quot;gdpr, no string&quot;"))
    }
}

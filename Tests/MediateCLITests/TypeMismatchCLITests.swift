import Foundation
import Testing

/// Issue 47 item 5: a value of the wrong type is named with the value found, bounded — never a network setting's
/// value, which may be a secret (an API key, a signature).
@Suite("mediate: a type mismatch names the value found", .serialized, .timeLimit(.minutes(2)))
struct TypeMismatchCLITests {
    @Test func aTypeMismatchNamesTheValueFoundButNeverASettingsValue() async throws {
        let secret = "gc_live_5ecret_do_not_print"
        let config = try writeConfig(
            """
            {"networks": {"gc": {"type": "growthcat", "base_url": "http://127.0.0.1:9/", "api_key": ["\(secret)"]},
               "cb": {"type": "chartboost", "base_url": "http://127.0.0.1:9/", "app_id": "a",
                 "app_signature": {"key": "\(secret)"}}},
             "placements": {"r": {"format": "rewarded", "lines": [{"network": "gc", "placement": "x", \
            "timeout_ms": "abc"}]}}}
            """)
        let run = try await mediate(["compare", "--config", config, "--requests", "1"])
        #expect(run.code == 2, "\(run.err)")
        #expect(
            run.err.contains(#"error: placements.r.lines[0].timeout_ms: expected a number, found the string "abc""#),
            "\(run.err)")
        #expect(run.err.contains("error: networks.gc.api_key: expected a string or a number, found an array\n"))
        #expect(run.err.contains("error: networks.cb.app_signature: expected a string or a number, found an object\n"))
        #expect(!run.err.contains(secret), "a setting's value is never printed: \(run.err)")
    }
}

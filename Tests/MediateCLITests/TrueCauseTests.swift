import AdMediationTesting
import Foundation
import Testing

/// Issue 47 item 1: `mediate compare` counts every error under its real code and names the likely cause.
@Suite("mediate compare names the true cause", .serialized, .timeLimit(.minutes(2)))
struct TrueCauseTests {
    static func server(status: Int) throws -> LoopbackHTTPServer {
        try LoopbackHTTPServer { _ in .respond(.text("no", status: status)) }
    }

    static func config(_ server: LoopbackHTTPServer, threshold: Int = 5) throws -> String {
        try writeConfig(
            """
            {"networks": {"ao": {"type": "appopen", "base_url": "\(server.baseURL)"}},
             "circuit_breaker": {"failure_threshold": \(threshold), "cool_down_s": 600},
             "placements": {"launch": {"format": "app_open", "lines": [{"network": "ao", "placement": "x", \
            "timeout_ms": 5000}]}}}
            """)
    }

    /// Requests refused by the open circuit breaker were counted as `network` errors: they were never sent.
    @Test func requestsRefusedByTheOpenBreakerAreCountedAsBreakerOpen() async throws {
        let server = try Self.server(status: 500)
        defer { server.stop() }
        let run = try await mediate([
            "compare", "--config", try Self.config(server, threshold: 3), "--requests", "20", "--concurrency", "1",
            "--format", "json",
        ])
        let root = try #require(
            try JSONSerialization.jsonObject(with: Data(run.out.utf8)) as? [String: Any], "\(run.out)\(run.err)")
        let placement = try #require((root["placements"] as? [[String: Any]])?.first)
        // The placement's own row is the waterfall's.
        let errors = try #require(placement["errors"] as? [String: Int], "\(placement)")
        #expect((errors["breaker_open"] ?? 0) >= 15, "\(errors)")
        #expect(errors["network"] == nil, "\(errors)")
        #expect(run.err.contains("the servers answered with errors (server_500)"), "\(run.err)")
    }

    /// Issue 47 item 4: `load` exited 0 when every line failed; a request nothing answered is not a no-fill result.
    @Test func loadExitsNonZeroWhenEveryLineFailed() async throws {
        let server = try Self.server(status: 500)
        defer { server.stop() }
        let run = try await mediate(["load", "--config", try Self.config(server), "--placement", "launch"])
        #expect(run.code == 1, "\(run.out)\(run.err)")
        #expect(run.err.contains("every line of launch failed"), "\(run.err)")
        #expect(run.out.contains("launch: no fill"), "the trace is still printed: \(run.out)")
    }

    /// Every failure got the same hint ("check that the server … is running"): a server refusing the credentials
    /// gets its own.
    @Test func aServerRefusingTheCredentialsIsNamedAsSuch() async throws {
        let server = try Self.server(status: 401)
        defer { server.stop() }
        let run = try await mediate([
            "compare", "--config", try Self.config(server, threshold: 1000), "--requests", "5", "--concurrency", "1",
        ])
        #expect(run.code == 3)
        #expect(run.err.contains("refused the credentials"), "\(run.err)")
        #expect(!run.err.contains("is running"), "\(run.err)")
    }
}

import Foundation
import Testing

/// Issue 47 item 5: the configuration is checked up front, once, with every problem listed; usage errors say
/// what is wrong in one voice (`error:`).
@Suite("mediate: configuration checked up front", .serialized, .timeLimit(.minutes(2)))
struct UpFrontChecksTests {
    /// A loopback app-open server counting requests, a plain-http network on a public host, and a Chartboost banner
    /// of a size Chartboost does not serve.
    static func twoProblems(_ server: String) throws -> String {
        try writeConfig(
            """
            {"networks": {"ao": {"type": "appopen", "base_url": "\(server)"},
               "far": {"type": "appopen", "base_url": "http://ads.example.com/appopen"},
               "cb": {"type": "chartboost", "base_url": "\(server)", "app_id": "a", "app_signature": "s"}},
             "placements": {"launch": {"format": "app_open", "lines": [{"network": "ao", "placement": "x", \
            "timeout_ms": 2000}]},
               "sky": {"format": "banner", "size": "300x600", "lines": [{"network": "cb", "placement": "Main", \
            "timeout_ms": 2000}]}}}
            """)
    }

    @Test func everyProblemOfTheFileIsListedBeforeAnyRequest() async throws {
        let (server, count) = try CLIUsabilityTests.countingServer()
        defer { server.stop() }
        let run = try await mediate(["compare", "--config", try Self.twoProblems(server.baseURL), "--requests", "3"])
        #expect(run.code == 2, "\(run.err)")
        #expect(run.err.contains("error: networks.far.base_url: plain http to ads.example.com"), "\(run.err)")
        #expect(
            run.err.contains("error: placements.sky.lines[0]: network cb (chartboost) serves banners of 320x50"),
            "\(run.err)")
        #expect(count() == 0, "no request before the check")
    }

    @Test func theArmsOfEveryPlacementAreCheckedTogetherBeforeAnyRequest() async throws {
        let (server, count) = try CLIUsabilityTests.countingServer()
        defer { server.stop() }
        let config = try writeConfig(
            """
            {"networks": {"ao": {"type": "appopen", "base_url": "\(server.baseURL)"}},
             "placements": {"a": {"format": "app_open", "lines": [{"network": "ao", "placement": "x", \
            "timeout_ms": 2000}]},
               "b": {"format": "app_open", "lines": [{"network": "ao", "placement": "y", "timeout_ms": 2000}]}}}
            """)
        let run = try await mediate(["compare", "--config", config, "--arms", "static,auction", "--requests", "3"])
        #expect(run.code == 2, "\(run.err)")
        #expect(run.err.contains("--arms auction: placement a has no bidders"), "\(run.err)")
        #expect(run.err.contains("--arms auction: placement b has no bidders"), "\(run.err)")
        #expect(count() == 0, "no request before the check")
    }

    @Test func aTruncatedFileNamesTheLineAndColumnWhereItStops() async throws {
        let config = try writeConfig("{\"networks\": {\n  \"ao\": {\"type\": \"appopen\",\n")
        let run = try await mediate(["load", "--config", config, "--placement", "launch"])
        #expect(run.code == 2)
        #expect(
            run.err.contains("configuration: not valid JSON at line 3, column 1: unexpected end of file"),
            "\(run.err)")
    }

    @Test func demoWithConfigIsRefused() async throws {
        let run = try await mediate(["compare", "--config", try unreachableConfig(), "--demo", "arms"])
        #expect(run.code == 2)
        #expect(run.err.contains("error: --demo runs a built-in demo instead of a file"), "\(run.err)")
    }

    @Test func aNegativeWatchSecondsIsRefusedWithItsRange() async throws {
        let run = try await mediate(["show", "--placement", "launch", "--watch-seconds", "-1"])
        #expect(run.code == 2)
        #expect(run.err.contains("--watch-seconds must be 0…3600, got -1"), "\(run.err)")
        #expect(!run.err.contains("Missing value"), "\(run.err)")
    }

    @Test func aNegativeSeedIsNamedInvalidNotMissing() async throws {
        let run = try await mediate(["compare", "--seed", "-1"])
        #expect(run.code == 2)
        #expect(run.err.contains("error: The value '-1' is invalid for '--seed <seed>'"), "\(run.err)")
    }

    @Test func argumentParserErrorsHaveTheSameLowercasePrefix() async throws {
        let run = try await mediate(["compare", "--requests", "many"])
        #expect(run.code == 2)
        #expect(run.err.hasPrefix("error: "), "\(run.err)")
        #expect(!run.err.contains("Error: "), "\(run.err)")
    }

    @Test func anOutputEndingInHTMLWritesTheHTMLReport() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("r-\(UUID().uuidString).html").path
        let run = try await mediate([
            "compare", "--requests", "3", "--placement", "home_tile", "--quiet", "--output", path,
        ])
        #expect(run.code == 0, "\(run.err)")
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text.hasPrefix("<!DOCTYPE html>"), "\(text.prefix(200))")
    }
}

import Foundation
import MediateKit
import Testing

/// Issue 47: every problem of the configuration file is listed in one run, each at its field with the value at
/// fault: the networks', the placements' and the breaker's found while reading it (not only the first), and, once it
/// reads, each placement's against the networks.
@Suite("mediate: every problem of the file at once", .serialized, .timeLimit(.minutes(2)))
struct DecodeProblemsCLITests {
    /// The problems `CLIConfiguration.check` finds in `json` (empty when it reads and checks).
    static func problems(_ json: String) -> [String] {
        do throws(ConfigurationProblems) {
            _ = try CLIConfiguration.check(Data(json.utf8))
            return []
        } catch {
            return error.lines
        }
    }

    @Test func problemsOfTwoNetworksAndAPlacementAreListedInOneRun() async throws {
        let config = try writeConfig(
            """
            {"networks": {"ao": {"type": "appopen", "base_url": "not a url"},
               "cb": {"type": "chartbost", "base_url": "http://127.0.0.1:9/"}},
             "placements": {"launch": {"format": "app_open", "lines": [{"network": "ao", "placement": "x", \
            "timeout_ms": 0}]}}}
            """)
        let run = try await mediate(["compare", "--config", config, "--requests", "1"])
        #expect(run.code == 2, "\(run.err)")
        #expect(
            run.err.contains(#"error: networks.ao.base_url: required, an absolute URL, got "not a url""#), "\(run.err)")
        #expect(run.err.contains(#"error: networks.cb.type: unknown type "chartbost""#), "\(run.err)")
        #expect(
            run.err.contains("error: placements.launch.lines[0].timeout_ms: must be 1…600000, got 0"), "\(run.err)")
        #expect(run.err.contains("error: 3 problems in the configuration; nothing was sent"), "\(run.err)")
        #expect(run.out.isEmpty, "nothing ran: \(run.out)")
    }

    @Test func pastTwentyProblemsTheFirstTwentyAreShownAndAllCounted() async throws {
        let placements = (10..<35).map {
            #""p\#($0)": {"format": "app_open", "max_in_flight": 0.5, "lines": [{"network": "ao", "placement": "x"}]}"#
        }
        let config = try writeConfig(
            #"{"networks": {"ao": {"type": "appopen", "base_url": "http://127.0.0.1:9/"}}, "placements": {"#
                + placements.joined(separator: ", ") + "}}")
        let run = try await mediate(["compare", "--config", config, "--requests", "1"])
        #expect(run.code == 2, "\(run.err)")
        let errors = run.err.split(separator: "\n").filter { $0.hasPrefix("error: placements.") }
        #expect(errors.count == 20, "\(run.err)")
        #expect(errors.first == "error: placements.p10.max_in_flight: must be a whole number, got 0.5")
        #expect(
            run.err.contains("error: 25 problems in the configuration (the first 20 shown); nothing was sent"),
            "\(run.err)")
    }

    @Test func eachPlacementsProblemAgainstTheNetworksIsListed() {
        let problems = Self.problems(
            """
            {"networks": {"ao": {"type": "appopen", "base_url": "http://127.0.0.1:9/"}},
             "placements": {"a": {"format": "app_open", "lines": [{"network": "gone", "placement": "x"}]},
               "b": {"format": "app_open", "max_in_flight": 99, "lines": [{"network": "ao", "placement": "x"}]}}}
            """)
        #expect(
            problems == [
                #"placements.a.lines[0].network: unknown network "gone""#,
                "placements.b.max_in_flight: must be 1…64, got 99",
            ])
    }

    @Test func aFileThatReadsAndChecksHasNoProblem() {
        let problems = Self.problems(
            """
            {"networks": {"ao": {"type": "appopen", "base_url": "http://127.0.0.1:9/"}},
             "placements": {"a": {"format": "app_open", "lines": [{"network": "ao", "placement": "x"}]}}}
            """)
        #expect(problems.isEmpty, "\(problems)")
    }
}

import Foundation
import Testing

/// Issue 47 item 5: the check against the networks lists every problem — every placement, line, bidder and arm — not
/// the first of each placement, through the same report as the problems found while reading the file.
@Suite("mediate: every validation problem at once", .serialized, .timeLimit(.minutes(2)))
struct ValidationProblemsCLITests {
    @Test func everyLineBidderAndArmProblemOfAPlacementIsListedByTheBinary() async throws {
        let config = try writeConfig(
            """
            {"networks": {"ao": {"type": "appopen", "base_url": "http://127.0.0.1:9/"},
               "cb": {"type": "chartboost", "base_url": "http://127.0.0.1:9/", "app_id": "a", "app_signature": "s"}},
             "placements": {"launch": {"format": "app_open", "max_in_flight": 99,
               "lines": [{"network": "gone", "placement": "x"}, {"network": "cb", "placement": "y"}],
               "bidders": [{"network": "lost", "placement": "t"}],
               "arms": [{"label": "b", "weight": 0}]}}}
            """)
        let run = try await mediate(["compare", "--config", config, "--requests", "1"])
        #expect(run.code == 2, "\(run.err)")
        for problem in [
            "placements.launch.max_in_flight: must be 1…64, got 99",
            #"placements.launch.lines[0].network: unknown network "gone""#,
            #"placements.launch.lines[1].network: network "cb" does not serve format "app_open""#,
            #"placements.launch.bidders[0].network: unknown network "lost""#,
            "placements.launch.arms[0].weight: must be over 0 and at most 1000000, got 0.0",
        ] {
            #expect(run.err.contains("error: " + problem + "\n"), "\(problem): \(run.err)")
        }
        #expect(run.err.contains("error: 5 problems in the configuration; nothing was sent"), "\(run.err)")
        #expect(run.out.isEmpty, "nothing ran: \(run.out)")
    }

    @Test func pastTwentyValidationProblemsTheBinaryShowsTwentyAndCountsThemAll() async throws {
        let lines = (0..<25).map { #"{"network": "gone\#($0)", "placement": "x"}"# }
        let config = try writeConfig(
            #"{"networks": {"ao": {"type": "appopen", "base_url": "http://127.0.0.1:9/"}}, "placements": {"#
                + #""launch": {"format": "app_open", "lines": ["# + lines.joined(separator: ", ") + "]}}}")
        let run = try await mediate(["compare", "--config", config, "--requests", "1"])
        #expect(run.code == 2, "\(run.err)")
        let errors = run.err.split(separator: "\n").filter { $0.hasPrefix("error: placements.launch.lines[") }
        #expect(errors.count == 20, "\(run.err)")
        #expect(
            run.err.contains("error: 25 problems in the configuration (the first 20 shown); nothing was sent"),
            "\(run.err)")
    }

    @Test func validationAndUpFrontProblemsAreListedTogetherInOneRun() async throws {
        // A line's unknown network (validation), a plain-http public host and a banner size the network does not
        // serve (the up-front checks), and an arm that cannot apply (--arms): one listing, one run.
        let config = try writeConfig(
            """
            {"networks": {"ao": {"type": "appopen", "base_url": "http://ads.example.com/"},
               "cb": {"type": "chartboost", "base_url": "http://127.0.0.1:9/", "app_id": "a", "app_signature": "s"}},
             "placements": {"launch": {"format": "app_open", "lines": [{"network": "gone", "placement": "x"}]},
               "wide": {"format": "banner", "size": "468x60", "lines": [{"network": "cb", "placement": "y"}]}}}
            """)
        let run = try await mediate(["compare", "--config", config, "--requests", "1"])
        #expect(run.code == 2, "\(run.err)")
        for problem in [
            #"placements.launch.lines[0].network: unknown network "gone""#,
            "networks.ao.base_url: plain http to ads.example.com, not a loopback host",
            "placements.wide.lines[0]: network cb (chartboost) serves banners of",
        ] {
            #expect(run.err.contains("error: " + problem), "\(problem): \(run.err)")
        }
        #expect(run.err.contains("error: 3 problems in the configuration; nothing was sent"), "\(run.err)")
        #expect(run.out.isEmpty, "nothing ran: \(run.out)")
    }
}

import AdMediation
import AdStorage
import DemandSandbox
import Foundation
import OpenRTBSandbox
import Testing

@Suite("mediate compare --arms", .serialized, .timeLimit(.minutes(2)))
struct ArmsTests {
    @Test func armsRunOnTheSameTrafficAndReportFillRevenueAndLatencyEach() async throws {
        let run = try await mediate([
            "compare", "--demo", "arms", "--placement", "auction_banner", "--arms", "waterfall,auction", "--requests",
            "40",
            "--format", "json", "--quiet",
        ])
        #expect(run.code == 0, "stderr: \(run.err)")
        let root = try #require(try JSONSerialization.jsonObject(with: Data(run.out.utf8)) as? [String: Any])
        let placement = try #require((root["arms"] as? [[String: Any]])?.first)
        #expect(placement["placement"] as? String == "auction_banner")
        let arms = try #require(placement["arms"] as? [[String: Any]])
        #expect(arms.map { $0["arm"] as? String } == ["waterfall", "auction"])
        for arm in arms {
            #expect(arm["requests"] as? Int == 40)
            let fill = try #require(arm["fill_rate"] as? Double)
            #expect((0...1).contains(fill))
            #expect(Set((arm["latency_ms"] as? [String: Double])?.keys ?? [:].keys) == ["p50", "p95", "p99"])
            #expect(arm["revenue_per_mille"] is Double)
        }
        #expect(arms[0]["revenue_vs_first"] as? Double == 1)
    }

    @Test func anUnknownOrSingleArmIsRefusedNamingTheProblem() async throws {
        let unknown = try await mediate(["compare", "--demo", "arms", "--arms", "static,greedy"])
        #expect(unknown.code != 0 && unknown.err.contains("unknown arm \"greedy\""), "\(unknown.err)")
        let single = try await mediate(["compare", "--demo", "arms", "--arms", "static"])
        #expect(single.code != 0 && single.err.contains("at least two arms"), "\(single.err)")
        let noBidders = try await mediate([
            "compare", "--demo", "arms", "--placement", "drift_banner", "--arms", "waterfall,auction", "--requests",
            "2",
        ])
        #expect(
            noBidders.code != 0 && noBidders.err.contains("placement drift_banner has no bidders"), "\(noBidders.err)")
    }

    @Test func aBidderFromTheConfigurationFileWinsALoad() async throws {
        let sandbox = try await DemandSandbox.start(
            scenario: SandboxScenario(networks: ["rtb": NetworkScenario(ecpm: .fixed(2.75))]))
        let path = try writeConfig(
            """
            {"networks": {"rtb": {"type": "openrtb", "base_url": "\(sandbox.bidderBaseURL("rtb"))", "app_bundle": \
            "com.example"}},
             "placements": {"p": {"format": "interstitial", "deadline_ms": 30000, "bidders": [{"network": "rtb", \
            "placement": "x", "timeout_ms": 30000}]}}}
            """)
        let run = try await mediate(["load", "--config", path, "--placement", "p", "--json"])
        let notices = (sandbox.routes(OpenRTBRoutes.self)?.records.bidNotices ?? []).map(\.kind)
        await sandbox.shutdown()
        #expect(run.code == 0, "\(run.err)")
        let root = try #require(try JSONSerialization.jsonObject(with: Data(run.out.utf8)) as? [String: Any])
        let bid = try #require((root["bids"] as? [[String: Any]])?.first)
        #expect(
            bid["network"] as? String == "rtb" && bid["outcome"] as? String == "fill" && bid["price"] as? Double == 2.75
        )
        #expect((bid["auction"] as? [String: Any])?["result"] as? String == "won")
        #expect((root["winner"] as? [String: Any])?["ecpm"] as? Double == 2.75)
        #expect(notices == [.win], "the CLI sends the win notice before it exits")
    }

    @Test func whatTheOptimizerLearnedIsKeptAcrossRuns() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "mediate-optimizer-\(UUID().uuidString).sqlite"
        ).path
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        func attempts() async throws -> Double {
            let data = try #require(try await SQLiteStateStore(path: path).load(key: "optimizer/drift_banner"))
            let stats = try JSONDecoder().decode([String: LineStatistics].self, from: data)
            return stats.values.reduce(0) { $0 + $1.attempts }
        }
        let arguments = [
            "compare", "--demo", "arms", "--placement", "drift_banner", "--requests", "60", "--quiet",
            "--optimizer-state", path,
        ]
        let first = try await mediate(arguments)
        #expect(first.code == 0, "\(first.err)")
        let afterFirst = try await attempts()
        let second = try await mediate(arguments)
        #expect(second.code == 0, "\(second.err)")
        let afterSecond = try await attempts()
        #expect(
            afterFirst > 0 && afterSecond > 1.5 * afterFirst,
            "the second run starts from the first run's statistics (\(afterFirst) → \(afterSecond))")
    }

    @Test func theConformanceCommandRunsTheBidderScenariosOnAnOpenRTBNetwork() async throws {
        let sandbox = try await DemandSandbox.start(
            scenario: SandboxScenario(networks: ["rtb": NetworkScenario(ecpm: .uniform(min: 1, max: 3))]))
        let path = try writeConfig(
            """
            {"networks": {"rtb": {"type": "openrtb", "base_url": "\(sandbox.bidderBaseURL("rtb"))"}},
             "placements": {"p": {"format": "banner", "size": "320x50", "bidders": [{"network": "rtb", "placement": \
            "tag"}]}}}
            """)
        let run = try await mediate(["conformance", "--config", path, "--network", "rtb"])
        await sandbox.shutdown()
        #expect(run.code == 0, "\(run.out)\n\(run.err)")
        for scenario in [
            "fillIsWellFormed", "expiredBidIsNeverShown", "noticesAreSentOnce", "floorIsRespected", "tmaxIsRespected",
        ] {
            #expect(run.out.contains("PASS  \(scenario)"), "\(scenario) in \(run.out)")
        }
    }
}

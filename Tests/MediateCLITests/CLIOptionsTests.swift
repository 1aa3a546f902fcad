import AdMediationTesting
import DemandSandbox
import Foundation
import Synchronization
import TestSupport
import Testing

/// `mediate`'s options for CI and reproducible runs (issue 33, items 9 and 10): thresholds, `--seed`, `--version`,
/// examples in help, one `--demo`, privacy signals.
@Suite("mediate CLI: options (issue 33 items 9-10)", .serialized, .timeLimit(.minutes(2)))
struct CLIOptionsTests {
    /// A loopback app-open server: the odd requests get a 500, the even ones no fill.
    static func halfFailingServer() throws -> LoopbackHTTPServer {
        let hits = Atomic<Int>(0)
        return try LoopbackHTTPServer { _ in
            let n = hits.add(1, ordering: .relaxed).newValue
            return .respond(.text("", status: n % 2 == 1 ? 500 : 204))
        }
    }

    // MARK: thresholds

    @Test func failUnderFillExitsOneAfterPrintingTheReportAndNamesThePlacement() async throws {
        let (server, _) = try CLIUsabilityTests.countingServer()  // every request: no fill
        defer { server.stop() }
        let run = try await mediate([
            "compare", "--config", try CLIUsabilityTests.countingConfig(server), "--requests", "5", "--quiet",
            "--fail-under-fill", "50",
        ])
        #expect(run.code == 1, "stderr: \(run.err)")
        #expect(run.out.contains("waterfall"), "the table is still printed")
        #expect(run.err.contains("threshold failed: launch: waterfall fill 0.0 % is under --fail-under-fill 50 %"))
    }

    @Test func maxErrorRateExitsOneWhenASourceFailsTooOften() async throws {
        let server = try Self.halfFailingServer()
        defer { server.stop() }
        let run = try await mediate([
            "compare", "--config", try CLIUsabilityTests.countingConfig(server), "--requests", "6", "--quiet",
            "--concurrency", "1", "--max-error-rate", "10",
        ])
        #expect(run.code == 1, "stderr: \(run.err)")
        #expect(run.out.contains("waterfall"), "the table is still printed")
        #expect(run.err.contains("threshold failed: launch: "), "stderr: \(run.err)")
        #expect(run.err.contains("over --max-error-rate 10 %"), "stderr: \(run.err)")
    }

    @Test func aRunWithinItsThresholdsExitsZero() async throws {
        let (server, _) = try CLIUsabilityTests.countingServer()
        defer { server.stop() }
        let run = try await mediate([
            "compare", "--config", try CLIUsabilityTests.countingConfig(server), "--requests", "5", "--quiet",
            "--fail-under-fill", "0", "--max-error-rate", "0",
        ])
        #expect(run.code == 0, "stderr: \(run.err)")
        #expect(!run.err.contains("threshold failed"))
    }

    // MARK: --seed

    /// Fills per source of a `compare --format json` run: `["home_tile waterfall": 31, "home_tile mars/…": 12, …]`.
    static func fillsPerSource(_ json: String) throws -> [String: Int] {
        let root = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        var fills: [String: Int] = [:]
        for placement in try #require(root["placements"] as? [[String: Any]]) {
            let id = try #require(placement["id"] as? String)
            fills["\(id) waterfall"] = try #require(placement["fills"] as? Int)
            for line in try #require(placement["lines"] as? [[String: Any]]) {
                let name = "\(id) \(line["network"] ?? "")/\(line["placement"] ?? "")"
                fills[name] = try #require(line["fills"] as? Int)
            }
        }
        return fills
    }

    /// One `compare --seed` run of the demo's `rewarded_coins` (one GrowthCat line, no injected faults) at
    /// concurrency 1: its fills per source, and whether any request timed out (a timeout depends on the machine, not
    /// on the seed).
    static func seededRun(_ seed: String) async throws -> (fills: [String: Int], timedOut: Bool) {
        let run = try await mediate([
            "compare", "--placement", "rewarded_coins", "--requests", "20", "--concurrency", "1", "--seed", seed,
            "--format", "json", "--quiet",
        ])
        #expect(run.code == 0, "stderr: \(run.err)")
        return (try Self.fillsPerSource(run.out), run.out.contains("\"timeout\""))
    }

    /// The sandbox answers one request at a time in one order, so the seed pins the draws. A run where a request
    /// timed out (a busy machine) proves nothing either way and is run again, at most three times.
    @Test func theSameSeedGivesTheSameFillsPerSourceAgainstTheDemoSandbox() async throws {
        for _ in 0..<3 {
            let first = try await Self.seededRun("7")
            let second = try await Self.seededRun("7")
            if first.timedOut || second.timedOut { continue }
            #expect(first.fills.count == 2, "the waterfall and its line: \(first.fills)")
            #expect(first.fills == second.fills, "first \(first.fills), second \(second.fills)")
            return
        }
        Issue.record("every attempt had a request time out; the machine is too busy to compare")
    }

    /// The seed reaches the sandbox: seeds 1 and 2 draw different fills (fixed seeds, so the test is deterministic;
    /// were `--seed` ignored, the demo's own seed would give both runs the same).
    @Test func anotherSeedChangesTheDraws() async throws {
        let one = try await Self.seededRun("1")
        let two = try await Self.seededRun("2")
        #expect(one.fills != two.fills, "seed 1: \(one.fills), seed 2: \(two.fills)")
    }

    // MARK: --version and examples

    @Test func versionPrintsTheVersionAndExitsZero() async throws {
        let run = try await mediate(["--version"])
        #expect(run.code == 0, "stderr: \(run.err)")
        let printed = run.out.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(printed.split(separator: ".").count == 3, "a semantic version: \(run.out)")
        #expect(printed.allSatisfy { $0.isNumber || $0 == "." }, "\(run.out)")
    }

    @Test(arguments: ["compare", "load", "show", "sandbox", "conformance"])
    func eachSubcommandsHelpHasExamples(_ command: String) async throws {
        let run = try await mediate([command, "--help"])
        #expect(run.code == 0)
        #expect(run.out.contains("Examples:"), "\(command) --help: \(run.out)")
        #expect(run.out.contains("mediate \(command) "), "an example of the command itself")
    }

    // MARK: one --demo

    @Test func sandboxServesTheArmsDemoAndWritesItsConfiguration() async throws {
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("mediate")
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("arms-\(UUID().uuidString).json").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let run = try await ChildProcess.run(
            binary.path, ["sandbox", "--demo", "arms", "--port", "0", "--write-config", path],
            killWhen: { $0.contains("config ") }, deadline: .seconds(60))
        #expect(!run.timedOut)
        #expect(run.out.contains("rtb-a      http://127.0.0.1:"), "stdout: \(run.out) stderr: \(run.err)")
        let root = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
        let auction = try #require((root["placements"] as? [String: Any])?["auction_banner"] as? [String: Any])
        #expect((auction["bidders"] as? [Any])?.count == 2, "the arms demo's auction with its two bidders")
    }

    @Test func conformanceHasNoDemoOrOptimizerStateOption() async throws {
        let help = try await mediate(["conformance", "--help"])
        #expect(help.code == 0)
        #expect(!help.out.contains("--demo") && !help.out.contains("--optimizer-state"), "\(help.out)")
        let run = try await mediate(["conformance", "--network", "mars", "--optimizer-state", "x.sqlite"])
        #expect(run.code == 2, "refused as an unknown option: \(run.err)")
    }

    // MARK: privacy options

    /// A valid TC string consenting purposes 1 and 2 (iabtcf-java's TCStringV2Test): under GDPR the privacy rules
    /// skip a network whose TC string does not decode.
    static let tcf = "COwxsONOwxsONKpAAAENAdCAAMAAAAAAAAAAAAAAAAAA"

    static let privacyArguments = [
        "--gdpr", "1", "--tcf", tcf, "--us-privacy", "1YNN", "--gpp", "GPP-STRING-Y", "--gpp-sid", "2,7", "--coppa",
    ]

    @Test func loadSendsThePrivacyOptionsOnTheWire() async throws {
        let sandbox = try await DemandSandbox.start()
        let config = try writeConfig(sandboxConfig(sandbox))
        let run = try await mediate(["load", "--config", config, "--placement", "launch"] + Self.privacyArguments)
        let recorded = sandbox.records.adRequestPrivacy
        await sandbox.shutdown()
        #expect(run.code == 0, "stderr: \(run.err)")
        let sent = try #require(recorded.first, "the app-open request reached the sandbox")
        for field in ["gdpr=1", "gdpr_consent=\(Self.tcf)", "us_privacy=1YNN", "gpp=GPP-STRING-Y", "coppa=1"] {
            #expect(sent.contains(field), "\(field) in \(sent)")
        }
        #expect(sent.contains("gpp_sid=2"), "\(sent)")
    }

    @Test func compareSendsThePrivacyOptionsWithEveryRequest() async throws {
        let sandbox = try await DemandSandbox.start()
        let config = try writeConfig(sandboxConfig(sandbox))
        let run = try await mediate(
            ["compare", "--config", config, "--placement", "banner", "--requests", "3", "--quiet"]
                + Self.privacyArguments)
        let recorded = sandbox.records.adRequestPrivacy
        await sandbox.shutdown()
        #expect(run.code == 0, "stderr: \(run.err)")
        #expect(recorded.count == 6, "3 mediated and 3 to the line's network alone: \(recorded)")
        for sent in recorded {
            #expect(sent.contains(Self.tcf) && sent.contains("1YNN") && sent.contains("GPP-STRING-Y"), "\(sent)")
        }
    }

    @Test("load's trace shows privacy_blocked with its reason when GDPR applies without a TC string")
    func loadTraceShowsPrivacyBlocked() async throws {
        let sandbox = try await DemandSandbox.start()
        let config = try writeConfig(sandboxConfig(sandbox))
        let run = try await mediate(
            ["load", "--config", config, "--placement", "launch", "--json", "--gdpr", "1", "--att", "denied"])
        let recorded = sandbox.records.adRequestPrivacy
        await sandbox.shutdown()
        #expect(run.code == 0, "stderr: \(run.err)")
        let root = try #require(try JSONSerialization.jsonObject(with: Data(run.out.utf8)) as? [String: Any])
        let trace = try #require((root["trace"] as? [[String: Any]])?.first)
        #expect(trace["outcome"] as? String == "skipped")
        #expect(trace["reason"] as? String == "privacy_blocked: gdpr applies without a tcf string", "\(trace)")
        #expect(recorded.isEmpty, "the blocked network was never asked: \(recorded)")
    }

    @Test func aBadATTValueIsAUsageError() async throws {
        let run = try await mediate(["load", "--placement", "launch", "--att", "maybe"])
        #expect(run.code == 2)
        #expect(run.err.contains("--att: not-determined, restricted, denied or authorized"), "stderr: \(run.err)")
    }

    @Test func aBadGDPRValueIsAUsageError() async throws {
        let run = try await mediate(["load", "--placement", "launch", "--gdpr", "2"])
        #expect(run.code == 2)
        #expect(run.err.contains("--gdpr: 0 or 1, got 2"), "stderr: \(run.err)")
    }
}

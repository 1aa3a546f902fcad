import AdMediationTesting
import DemandSandbox
import Foundation
import Synchronization
import TestSupport
import Testing

/// A configuration whose one network listens nowhere (port 9 on loopback refuses connections).
func unreachableConfig() throws -> String {
    try writeConfig(
        """
        {"networks": {"ao": {"type": "appopen", "base_url": "http://127.0.0.1:9/appopen"}},
         "placements": {"launch": {"format": "app_open", "lines": [{"network": "ao", "placement": "x", \
        "timeout_ms": 2000}]}}}
        """)
}

/// `mediate` as a new user meets it (issue 33): failures that say so, results kept, errors that point at the fix.
@Suite("mediate CLI: usability (issue 33)", .serialized, .timeLimit(.minutes(2)))
struct CLIUsabilityTests {
    // MARK: item 2 — total failure

    @Test func compareExitsThreeWithAWarningWhenEveryRequestFails() async throws {
        let run = try await mediate(["compare", "--config", try unreachableConfig(), "--requests", "5", "--quiet"])
        #expect(run.code == 3, "stderr: \(run.err)")
        #expect(run.err.contains("error: every request failed (network:"), "stderr: \(run.err)")
        #expect(run.out.contains("waterfall"), "the table is still printed")
    }

    @Test func theWaterfallRowCountsTheErrorsWhenEveryLineFailed() async throws {
        let run = try await mediate([
            "compare", "--config", try unreachableConfig(), "--requests", "5", "--quiet", "--format", "json",
        ])
        let root = try #require(try JSONSerialization.jsonObject(with: Data(run.out.utf8)) as? [String: Any])
        let placement = try #require((root["placements"] as? [[String: Any]])?.first)
        #expect(placement["errors"] as? [String: Int] == ["network": 5], "\(run.out)")
    }

    // MARK: item 4 — --output is checked before the run

    /// A loopback app-open server that counts the requests it gets (and answers each with no fill).
    static func countingServer() throws -> (server: LoopbackHTTPServer, count: @Sendable () -> Int) {
        let hits = Atomic<Int>(0)
        let server = try LoopbackHTTPServer { _ in
            hits.add(1, ordering: .relaxed)
            return .respond(.text("", status: 204))
        }
        return (server, { hits.load(ordering: .relaxed) })
    }

    static func countingConfig(_ server: LoopbackHTTPServer) throws -> String {
        try writeConfig(
            """
            {"networks": {"ao": {"type": "appopen", "base_url": "\(server.baseURL)"}},
             "placements": {"launch": {"format": "app_open", "lines": [{"network": "ao", "placement": "x", \
            "timeout_ms": 2000}]}}}
            """)
    }

    @Test func anOutputInAMissingDirectoryFailsBeforeAnyRequest() async throws {
        let (server, count) = try Self.countingServer()
        defer { server.stop() }
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent("no-such-dir-\(UUID().uuidString)")
        let path = missing.appendingPathComponent("r.json").path
        let run = try await mediate([
            "compare", "--config", try Self.countingConfig(server), "--requests", "50", "--output", path,
        ])
        #expect(run.code == 2)
        #expect(run.err.contains("--output: cannot write \(path): the directory"), "stderr: \(run.err)")
        #expect(count() == 0, "no request before the check")
    }

    @Test func anOutputUnderAFileFailsBeforeAnyRequest() async throws {
        let (server, count) = try Self.countingServer()
        defer { server.stop() }
        let file = try writeConfig("{}")
        let path = file + "/r.json"
        let run = try await mediate([
            "compare", "--config", try Self.countingConfig(server), "--requests", "50", "--output", path,
        ])
        #expect(run.code == 2)
        #expect(run.err.contains("--output: cannot write \(path): \(file) is not a directory"), "stderr: \(run.err)")
        #expect(count() == 0, "no request before the check")
    }

    /// Issue 45: `--output` wrote by rename, so a FIFO, symlink or device node given as the output was replaced by a
    /// regular file. Such an output is refused before any request, and left as it was.
    @Test(arguments: ["symlink", "fifo"])
    func anOutputThatIsNotARegularFileIsRefusedAndLeftAlone(kind: String) async throws {
        let (server, count) = try Self.countingServer()
        defer { server.stop() }
        let target = try writeConfig("{}")
        let path = target + ".\(kind)"
        if kind == "symlink" {
            try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: target)
        } else {
            #expect(mkfifo(path, 0o600) == 0)
        }
        defer { try? FileManager.default.removeItem(atPath: path) }
        let run = try await mediate([
            "compare", "--config", try Self.countingConfig(server), "--requests", "5", "--output", path,
        ])
        #expect(run.code == 2)
        #expect(run.err.contains("is not a regular file"), "stderr: \(run.err)")
        #expect(count() == 0, "no request before the check")
        let type = try FileManager.default.attributesOfItem(atPath: path)[.type] as? FileAttributeType
        #expect(type != .typeRegular, "the \(kind) is still there, not replaced by a file")
    }

    // MARK: item 3 — Ctrl-C keeps the work done

    /// Runs `mediate` (the demo, far more requests than it will finish) and sends SIGINT once the first plain
    /// progress line of phase 1 shows requests done.
    static func interruptedCompare(_ extra: [String], signal: Int32 = SIGINT) async throws -> ChildResult {
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("mediate")
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_STATE_HOME"] =
            FileManager.default.temporaryDirectory.appendingPathComponent("mediate-state-\(UUID().uuidString)").path
        let arguments =
            ["compare", "--requests", "1000000", "--progress", "plain", "--progress-interval", "0.2"] + extra
        return try await ChildProcess.run(
            binary.path, arguments, environment: environment,
            interruptWhen: { $0.contains("phase 1 of") && $0.contains("req/s · ETA") }, interruptSignal: signal,
            deadline: .seconds(60))
    }

    /// Issue 45: SIGTERM (a CI runner's timeout) and SIGHUP (a closed terminal) ended `compare` at once with no
    /// partial report; only SIGINT was handled. They are handled alike.
    @Test(arguments: [SIGTERM, SIGHUP])
    func terminationSignalsWriteThePartialReportLikeCtrlC(signal: Int32) async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("partial-\(UUID().uuidString).json")
            .path
        let run = try await Self.interruptedCompare(["--format", "json", "--output", path], signal: signal)
        #expect(!run.timedOut && !run.signalled, "stderr: \(run.err)")
        #expect(run.status == 130, "stderr: \(run.err)")
        let root = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
        #expect((root["partial"] as? [String: Int])?["requests_done"].map { $0 > 0 } == true)
    }

    @Test func ctrlCWritesThePartialReportToOutputAndExits130() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("partial-\(UUID().uuidString).json")
            .path
        let run = try await Self.interruptedCompare(["--format", "json", "--output", path])
        #expect(!run.timedOut && !run.signalled, "stderr: \(run.err)")
        #expect(run.status == 130, "stderr: \(run.err)")
        let root = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
        let partial = try #require(root["partial"] as? [String: Int])
        let done = try #require(partial["requests_done"])
        #expect(done > 0 && done < 1_000_000, "\(partial)")
        let placement = try #require((root["placements"] as? [[String: Any]])?.first)
        #expect(placement["requests"] as? Int == done, "only phase 1 ran, and it is reported")
        #expect(!run.err.contains("phase 2 of"), "no phase started after Ctrl-C")
    }

    @Test func ctrlCPrintsTheTableOfWhatRanMarkedPartial() async throws {
        let run = try await Self.interruptedCompare([])
        #expect(run.status == 130, "stderr: \(run.err)")
        #expect(run.out.hasPrefix("partial: interrupted after "), "stdout: \(run.out)")
        #expect(run.out.contains("waterfall"), "the table of what ran")
        #expect(run.err.contains("interrupted: finishing the requests in flight"), "stderr: \(run.err)")
    }

    // MARK: item 8 — errors that mislead

    /// No control character but newline in `text`.
    static func controlCharacters(_ text: String) -> [UInt32] {
        text.unicodeScalars.filter { ($0.value < 0x20 && $0 != "\n") || (0x7F...0x9F).contains($0.value) }
            .map(\.value)
    }

    @Test func aNegativeRequestCountSaysWhatIsWrongWithIt() async throws {
        let run = try await mediate(["compare", "--requests", "-5"])
        #expect(run.code == 2)
        #expect(run.err.contains("--requests must be positive, got -5"), "stderr: \(run.err)")
    }

    @Test func aPortInUseIsSaidPlainlyWithoutLibraryInternals() async throws {
        let taken = try LoopbackHTTPServer { _ in .respond(.text("")) }
        defer { taken.stop() }
        let run = try await mediate(["sandbox", "--port", "\(taken.port)"], timeout: .seconds(30))
        #expect(run.code == 2)
        #expect(run.err.contains("--port \(taken.port): the port is already in use"), "stderr: \(run.err)")
        #expect(!run.err.contains("bind(") && !run.err.contains("errno"), "stderr: \(run.err)")
    }

    @Test func anErrorNamingAPathEscapesItsControlCharacters() async throws {
        let path = "/nonexistent/evil\u{1B}]0;pwned\u{07}.json"
        let run = try await mediate(["compare", "--config", path])
        #expect(run.code == 2)
        #expect(Self.controlCharacters(run.err).isEmpty, "stderr: \(run.err)")
        #expect(run.err.contains(#"evil\u{1B}]0;pwned\u{07}.json"#), "shown escaped: \(run.err)")
    }

    @Test func aUsageErrorEscapesTheControlCharactersOfTheArgument() async throws {
        let run = try await mediate(["compare", "--format", "x\u{1B}[2J\u{9B}"])
        #expect(run.code == 2)
        #expect(Self.controlCharacters(run.err).isEmpty, "stderr: \(run.err)")
        #expect(run.err.contains(#"x\u{1B}[2J\u{9B}"#), "shown escaped: \(run.err)")
    }

    @Test func loadWithAnUnknownPlacementListsTheConfiguredOnes() async throws {
        let run = try await mediate(["load", "--placement", "nope"])
        #expect(run.code == 2)
        #expect(run.err.contains(#"unknown placement "nope" (configured: feed_story, home_tile"#), "\(run.err)")
    }

    @Test func aMistypedCommandSuggestsTheNearestOne() async throws {
        let run = try await mediate(["compre", "--requests", "1"])
        #expect(run.code == 2)
        #expect(run.err.contains(#"unknown command "compre" (did you mean "compare"?)"#), "stderr: \(run.err)")
    }

    // MARK: item 1 — conformance against the project's own demo

    @Test(arguments: ["mars", "chartboost", "appopen", "growthcat"])
    func conformanceAgainstTheDemoPassesForEachNetwork(network: String) async throws {
        let run = try await mediate(["conformance", "--network", network])
        #expect(run.code == 0, "\(run.out)\(run.err)")
        #expect(!run.out.contains("FAIL"), "\(run.out)")
    }

    @Test func conformanceAgainstTheDemoRunsEveryScenario() async throws {
        // The demo's sandbox is driven through its admin API (no fill, failures, slow answers): nothing is skipped.
        // Skips against a server that is not a sandbox: ConformanceSandboxTests.
        let run = try await mediate(["conformance", "--network", "appopen"])
        let summary = run.out.split(separator: "\n").last.map(String.init) ?? ""
        #expect(summary == "15 passed, 0 skipped, 0 failed", "\(run.out)")
    }

    @Test func conformanceAsksMarsOnlyForThePrivacyFieldItCarries() async throws {
        let sandbox = try await DemandSandbox.start()
        let config = try writeConfig(
            """
            {"networks": {"mars": {"type": "mars", "base_url": "\(sandbox.marsBaseURL)"}},
             "placements": {"tile": {"format": "tile", "lines": [{"network": "mars", "placement": "mock_tile_1", \
            "timeout_ms": 2000}]}}}
            """)
        let run = try await mediate(["conformance", "--config", config, "--network", "mars"])
        await sandbox.shutdown()
        #expect(run.out.contains("PASS  privacySignalsReachTheWire"), "\(run.out)")
    }

    // MARK: item 5 — progress

    /// A loopback app-open server answering every request with no fill after `delay`, and a one-line configuration.
    static func slowServerConfig(delay: Duration) throws -> (server: LoopbackHTTPServer, config: String) {
        let server = try LoopbackHTTPServer { _ in .respond(.text("", status: 204, delay: delay)) }
        return (server, try countingConfig(server))
    }

    @Test func plainProgressPrintsOneLinePerPhase() async throws {
        let (server, config) = try Self.slowServerConfig(delay: .zero)
        defer { server.stop() }
        let run = try await mediate(["compare", "--config", config, "--requests", "100"])
        #expect(run.code == 0, "stderr: \(run.err)")
        let lines = run.err.split(separator: "\n")
        #expect(lines.count == 3, "the run's line and one per phase: \(run.err)")
        #expect(lines.last?.hasPrefix("phase 2 of 2 · launch → ao/x · 100 requests in ") == true, "\(run.err)")
    }

    @Test func plainProgressOfALongPhaseShowsRateAndETA() async throws {
        let (server, config) = try Self.slowServerConfig(delay: .milliseconds(20))
        defer { server.stop() }
        let run = try await mediate([
            "compare", "--config", config, "--requests", "30", "--concurrency", "1", "--progress", "plain",
            "--progress-interval", "0.1",
        ])
        #expect(run.code == 0, "stderr: \(run.err)")
        let pattern = #/phase 1 of 2 · launch \(waterfall\) · \d+ % · [\d ]+ req/s · ETA \d+ s/#
        #expect(run.err.split(separator: "\n").contains { $0.wholeMatch(of: pattern) != nil }, "\(run.err)")
    }

    /// `script` (util-linux) gives the child a pseudo-terminal, as an engineer's shell would.
    static let hasScript = FileManager.default.isExecutableFile(atPath: "/usr/bin/script")

    @Test(.enabled(if: hasScript)) func terminalProgressRedrawsOneLinePerPhaseInPlace() async throws {
        let (server, config) = try Self.slowServerConfig(delay: .milliseconds(20))
        defer { server.stop() }
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("mediate").path
        let command = "'\(binary)' compare --config '\(config)' --requests 30 --concurrency 1"
        let run = try await ChildProcess.run(
            "/usr/bin/script", ["-q", "-e", "-c", command, "/dev/null"], deadline: .seconds(60))
        #expect(run.status == 0, "\(run.out)")
        let phaseOne = run.out.split(separator: "\n").filter { $0.contains("phase 1 of 2") }
        #expect(phaseOne.count == 1, "one line for the phase: \(run.out)")
        #expect(phaseOne.first?.contains("\r\u{1B}[K") == true, "redrawn in place")
        #expect(phaseOne.first?.contains("30 requests in") == true, "its last state: \(run.out)")
    }

    // MARK: item 7 — the table fits 80 columns

    /// A loopback app-open server (no fill) under a long network id and a long placement id.
    static func longNamesConfig() throws -> (server: LoopbackHTTPServer, config: String) {
        let server = try LoopbackHTTPServer { _ in .respond(.text("", status: 204)) }
        let config = try writeConfig(
            """
            {"networks": {"an_app_open_network_with_a_long_id": {"type": "appopen", "base_url": "\(server.baseURL)"}},
             "placements": {"launch": {"format": "app_open", "lines": [\
            {"network": "an_app_open_network_with_a_long_id", \
            "placement": "ca-app-pub-3940256099942544/5575463023-and-more", "timeout_ms": 2000}]}}}
            """)
        return (server, config)
    }

    @Test func theTableFitsEightyColumns() async throws {
        let (server, config) = try Self.longNamesConfig()
        defer { server.stop() }
        let run = try await mediate(["compare", "--config", config, "--requests", "5", "--quiet"])
        #expect(run.code == 0, "stderr: \(run.err)")
        let lines = run.out.split(separator: "\n")
        #expect(lines.count >= 3 && lines.allSatisfy { $0.count <= 80 }, "\n\(run.out)")
        #expect(run.out.contains("  an_app_open") && run.out.contains("…"), "a long name shortened in the middle")
    }

    @Test func theWideTableKeepsEveryColumn() async throws {
        let (server, config) = try Self.longNamesConfig()
        defer { server.stop() }
        let run = try await mediate(["compare", "--config", config, "--requests", "5", "--quiet", "--wide"])
        #expect(run.out.split(separator: "\n").first?.contains("p99 ms") == true, "\(run.out)")
        #expect(run.out.contains("an_app_open_network_with_a_long_id/ca-app-pub-3940256099942544/5575463023-and-more"))
    }

    // MARK: item 6 — the HTML report

    /// `mediate compare --format html` against a loopback server where two requests in three fail (500), read back.
    static func htmlReport() async throws -> String {
        let counter = Atomic<Int>(0)
        let server = try LoopbackHTTPServer { _ in
            let n = counter.add(1, ordering: .relaxed).newValue
            return .respond(.text("", status: n % 3 == 0 ? 204 : 500))
        }
        defer { server.stop() }
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("report-\(UUID().uuidString).html")
            .path
        let run = try await mediate([
            "compare", "--config", try countingConfig(server), "--requests", "30", "--format", "html", "--output", path,
            "--quiet",
        ])
        #expect(run.code == 0, "stderr: \(run.err)")
        return try String(contentsOfFile: path, encoding: .utf8)
    }

    @Test func theHTMLReportScalesErrorBarsToTheSourcesRequests() async throws {
        let html = try await Self.htmlReport()
        #expect(html.contains("Errors by source and code (% of the source's requests)"), "what 100 % is")
        // The line's count, from the embedded JSON (the waterfall's breaker may skip some of its requests).
        let json = try #require(html.firstMatch(of: #/id="report-data">(.*)</script>/#)?.1)
        let root = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        let line = try #require(((root["placements"] as? [[String: Any]])?.first?["lines"] as? [[String: Any]])?.first)
        let count = try #require((line["errors"] as? [String: Int])?["server_500"])
        #expect(count > 0 && count < 30)
        #expect(html.contains("<title>ao/x server_500 (\(count))</title>"), "the count in the label")
        let share = String(format: "%.1f%%", Double(count) / 30 * 100)
        #expect(html.contains("\(share)</text>"), "\(count) of 30 requests: \(share)")
    }

    @Test func theHTMLReportOpensWithASummaryAndTheRunsDetails() async throws {
        let html = try await Self.htmlReport()
        let summary = try #require(html.range(of: "<section id=\"summary\">"))
        let firstPlacement = try #require(html.range(of: "data-placement="))
        #expect(summary.lowerBound < firstPlacement.lowerBound, "the summary comes first")
        #expect(html.contains(#"<td data-field="best_line">ao/x</td>"#))
        #expect(html.contains(#"<td data-field="requests per source">30</td>"#), "run details")
    }

    @Test func theHTMLReportSaysWhyAShortRunHasNoFillOverTimeChart() async throws {
        let html = try await Self.htmlReport()
        #expect(html.contains("the run lasted under 2 s, too short for a chart"))
    }

    @Test func theHTMLReportHasAWinShareChart() async throws {
        let html = try await Self.htmlReport()
        #expect(html.contains(#"aria-label="Win share (% of the waterfall's fills)""#))
    }
}

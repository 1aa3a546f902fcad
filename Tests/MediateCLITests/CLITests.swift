import AdMediationTesting
import DemandSandbox
import Foundation
import TestSupport
import Testing

/// Runs the built `mediate` binary and returns its exit code, stdout and stderr; a run past `timeout` is killed and
/// fails the call. The child is watched off the cooperative pool.
func mediate(_ arguments: [String], timeout: Duration = .seconds(120)) async throws -> (
    code: Int32, out: String, err: String
) {
    let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(
        "mediate")
    // Each run gets its own state directory, so the durable GrowthCat queue of one test never reaches another.
    var environment = ProcessInfo.processInfo.environment
    environment["XDG_STATE_HOME"] =
        FileManager.default.temporaryDirectory.appendingPathComponent("mediate-state-\(UUID().uuidString)").path
    let result = try await ChildProcess.run(binary.path, arguments, environment: environment, deadline: timeout)
    if result.timedOut {
        throw ChildProcessError(description: "mediate \(arguments.joined(separator: " ")) ran past \(timeout)")
    }
    return (result.status, result.out, result.err)
}

func writeConfig(_ json: String) throws -> String {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("mediate-\(UUID().uuidString).json").path
    try json.write(toFile: path, atomically: true, encoding: .utf8)
    return path
}

/// The sandbox's app-open test unit and a Chartboost banner. Lines and deadlines are hang guards (30 s): the CLI
/// runs beside the suite, on machines that may be busy, and the tests assert outcomes, not the time.
func sandboxConfig(_ sandbox: RunningSandbox, signature: String = "cb_sig_demo_secret") -> String {
    """
    {"networks": {
       "ao": {"type": "appopen", "base_url": "\(sandbox.appOpenBaseURL)"},
       "cb": {"type": "chartboost", "base_url": "\(sandbox.chartboostBaseURL)", "app_id": "cb_app_demo", \
    "app_signature": "\(signature)"}},
     "placements": {
       "launch": {"format": "app_open", "deadline_ms": 30000, "lines": [{"network": "ao", "placement": \
    "ca-app-pub-3940256099942544/5575463023", "timeout_ms": 30000}]},
       "banner": {"format": "banner", "size": "320x50", "deadline_ms": 30000, "lines": [{"network": "cb", \
    "placement": "Main Menu", "timeout_ms": 30000}]}}}
    """
}

/// A rewarded GrowthCat placement on `sandbox` with the hang guard's timeouts (the built-in demo's 500 ms line can
/// time out on a busy machine, which these tests are not about).
func rewardedConfig(_ sandbox: RunningSandbox) -> String {
    """
    {"networks": {"growthcat": {"type": "growthcat", "base_url": "\(sandbox.growthcatBaseURL)", \
    "api_key": "gc_test_demo", "catalog_cache": "false"}},
     "placements": {"rewarded_coins": {"format": "rewarded", "deadline_ms": 30000, "lines": [{"network": \
    "growthcat", "placement": "rewarded_coins", "timeout_ms": 30000}]}}}
    """
}

@Suite("mediate CLI (end to end)", .serialized, .timeLimit(.minutes(2)))
struct CLITests {
    @Test func compareWithoutConfigRunsTheDemoAndPrintsATable() async throws {
        let run = try await mediate(["compare", "--requests", "20"])
        #expect(run.code == 0, "stderr: \(run.err)")
        #expect(run.out.contains("waterfall") && run.out.contains("fill") && run.out.contains("win"))
        #expect(run.err.contains("demo: demand sandbox on http://127.0.0.1:"), "progress goes to stderr")
        #expect(!run.out.contains("demand sandbox"), "results only on stdout")
    }

    @Test func compareJSONHasTheDocumentedShape() async throws {
        let run = try await mediate([
            "compare", "--requests", "10", "--format", "json", "--quiet", "--placement", "home_tile",
        ])
        #expect(run.code == 0)
        let root = try #require(try JSONSerialization.jsonObject(with: Data(run.out.utf8)) as? [String: Any])
        let placement = try #require((root["placements"] as? [[String: Any]])?.first)
        #expect(placement["id"] as? String == "home_tile")
        #expect(placement["requests"] as? Int == 10)
        for key in ["fills", "fill_rate", "latency_ms"] { #expect(placement[key] != nil, "missing \(key)") }
        #expect(Set((placement["latency_ms"] as? [String: Double])?.keys ?? [:].keys) == ["p50", "p95", "p99"])
        let line = try #require((placement["lines"] as? [[String: Any]])?.first)
        for key in ["network", "requests", "fills", "fill_rate", "wins", "errors", "latency_ms"] {
            #expect(line[key] != nil, "missing lines[].\(key)")
        }
        #expect(run.err.isEmpty, "--quiet prints no progress")
    }

    @Test func compareCSVHasAHeaderAndARowPerSource() async throws {
        let run = try await mediate([
            "compare", "--requests", "5", "--format", "csv", "--quiet", "--placement", "home_tile",
        ])
        let lines = run.out.split(separator: "\n")
        #expect(lines.first?.hasPrefix("placement,source,network") == true)
        #expect(lines.count == 4, "header, waterfall, two lines")
    }

    @Test func compareHTMLIsOneSelfContainedFileWithCharts() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("report-\(UUID().uuidString).html")
            .path
        let run = try await mediate(["compare", "--requests", "5", "--format", "html", "--output", path, "--quiet"])
        #expect(run.code == 0)
        let html = try String(contentsOfFile: path, encoding: .utf8)
        #expect(html.contains("<svg") && html.contains("</html>"))
        #expect(
            !html.contains("<script src") && !html.contains("<link") && !html.contains("<img"), "no external assets")
    }

    @Test func loadPrintsTheTraceAsJSON() async throws {
        let sandbox = try await DemandSandbox.start()
        let config = try writeConfig(sandboxConfig(sandbox))
        let run = try await mediate(["load", "--config", config, "--placement", "launch", "--json"])
        await sandbox.shutdown()
        #expect(run.code == 0, "stderr: \(run.err)")
        let root = try #require(try JSONSerialization.jsonObject(with: Data(run.out.utf8)) as? [String: Any])
        #expect(root["placement"] as? String == "launch" && root["filled"] as? Bool == true)
        #expect((root["winner"] as? [String: Any])?["network"] as? String == "ao")
        let trace = try #require((root["trace"] as? [[String: Any]])?.first)
        #expect(trace["outcome"] as? String == "fill")
        for key in ["network", "latency_ms", "ecpm", "error", "reason"] {
            #expect(trace.keys.contains(key), "missing trace[].\(key)")
        }
    }

    @Test func loadWritesTheRequestsSpansAsOTLPJSON() async throws {
        let sandbox = try await DemandSandbox.start()
        let config = try writeConfig(sandboxConfig(sandbox))
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("spans-\(UUID().uuidString).json").path
        let run = try await mediate(["load", "--config", config, "--placement", "launch", "--trace-file", path])
        await sandbox.shutdown()
        #expect(run.code == 0, "stderr: \(run.err)")
        let root = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
        let resource = try #require((root["resourceSpans"] as? [[String: Any]])?.first)
        let spans = try #require(((resource["scopeSpans"] as? [[String: Any]])?.first)?["spans"] as? [[String: Any]])
        func named(_ name: String) -> [[String: Any]] { spans.filter { ($0["name"] as? String) == name } }
        let mediation = try #require(named("mediation").first)
        let line = try #require(named("ad line").first)
        let http = try #require(spans.first { ($0["name"] as? String)?.hasPrefix("HTTP ") == true })
        let traceID = try #require(mediation["traceId"] as? String)
        #expect(traceID.count == 32 && traceID.allSatisfy(\.isHexDigit))
        #expect(spans.allSatisfy { $0["traceId"] as? String == traceID }, "one trace")
        #expect(line["parentSpanId"] as? String == mediation["spanId"] as? String)
        #expect(http["parentSpanId"] as? String == line["spanId"] as? String, "the HTTP request is a child of its line")
        #expect(http["kind"] as? Int == 3, "client span")
    }

    @Test func loadFillsAMarsTileOverOHTTPAndTheRelaySeesOnlyCiphertext() async throws {
        let sandbox = try await DemandSandbox.start()
        let config = try writeConfig(
            """
            {"networks": {"mars": {"type": "mars", "base_url": "\(sandbox.marsBaseURL)",
                                   "ohttp": {"relay": "\(sandbox.rootURL)/ohttp/relay", "config": \
            "\(sandbox.rootURL)/ohttp/keys"}}},
             "placements": {"tile": {"format": "tile", "lines": [{"network": "mars", "placement": "mock_tile_1", \
            "timeout_ms": 5000}]}}}
            """)
        let run = try await mediate(["load", "--config", config, "--placement", "tile", "--json"])
        let records = sandbox.records
        await sandbox.shutdown()
        #expect(run.code == 0, "stderr: \(run.err)")
        let root = try #require(try JSONSerialization.jsonObject(with: Data(run.out.utf8)) as? [String: Any])
        #expect(root["filled"] as? Bool == true)
        #expect(records.ohttpRelayed.count == 1 && records.ohttpGatewayRequests.first?.path == "/mars/v1/ads")
        #expect(
            records.ohttpRelayed.allSatisfy { $0.body.range(of: Data("mock_tile_1".utf8)) == nil },
            "the relay never saw plaintext")
        #expect(records.count("POST /mars/v1/ads") == 1, "the one ad request came through the gateway, none directly")
    }

    @Test func ohttpSettingOnANetworkOtherThanMarsIsRefusedAtItsField() async throws {
        let config = try writeConfig(
            """
            {"networks": {"ao": {"type": "appopen", "base_url": "http://127.0.0.1:9/appopen", "ohttp": {"relay": \
            "http://r/", "config": "http://c/"}}},
             "placements": {"launch": {"format": "app_open", "lines": [{"network": "ao", "placement": "x"}]}}}
            """)
        let run = try await mediate(["load", "--config", config, "--placement", "launch"])
        #expect(run.code != 0)
        #expect(
            run.err.contains(
                "networks.ao.ohttp: unknown key for type appopen (valid keys: base_url, tcf_vendor_id, type)"),
            "stderr: \(run.err)")
    }

    @Test func aFullDemoRunLogsItsDecisionsAndNoSecret() async throws {
        let run = try await mediate(["compare", "--requests", "20", "--quiet", "--log-level", "trace"])
        #expect(run.code == 0, "stderr: \(run.err)")
        let lines = run.err.split(separator: "\n")
        #expect(
            lines.contains { $0.contains("admediation.mediator") && $0.contains("filled") }, "the decisions are logged")
        #expect(lines.contains { $0.contains("debug") && $0.contains("network=") }, "the lines are logged at debug")
        for secret in ["gc_test_demo", "cb_sig_demo_secret"] {
            #expect(!run.err.contains(secret) && !run.out.contains(secret), "\(secret) appears in the output")
        }
    }

    @Test func anUnknownLogLevelIsRefused() async throws {
        let run = try await mediate(["compare", "--requests", "1", "--log-level", "loud"])
        #expect(run.code != 0)
        #expect(run.err.contains("--log-level: one of trace, debug"), "stderr: \(run.err)")
    }

    @Test func loadCanAskOneNetworkAlone() async throws {
        let sandbox = try await DemandSandbox.start()
        let config = try writeConfig(sandboxConfig(sandbox))
        let run = try await mediate(["load", "--config", config, "--placement", "banner", "--network", "cb"])
        await sandbox.shutdown()
        #expect(run.code == 0)
        #expect(run.out.hasPrefix("banner: filled by cb"))
    }

    @Test func showDrivesImpressionClickAndClose() async throws {
        let sandbox = try await DemandSandbox.start()
        let config = try writeConfig(sandboxConfig(sandbox))
        let run = try await mediate(["show", "--config", config, "--placement", "launch", "--click", "--json"])
        let hits = sandbox.records.trackingHits.map { $0.query["e"] ?? "" }
        await sandbox.shutdown()
        #expect(run.code == 0, "stderr: \(run.err)")
        #expect(hits == ["impression", "click"])
        let root = try #require(try JSONSerialization.jsonObject(with: Data(run.out.utf8)) as? [String: Any])
        #expect(
            (root["events"] as? [[String: Any]])?.map { $0["event"] as? String } == [
                "impression", "click", "ad_closed",
            ])
    }

    @Test func showValidatesTheRewardOfARewardedGrowthCatAd() async throws {
        let sandbox = try await DemandSandbox.start()
        let run = try await mediate([
            "show", "--config", try writeConfig(rewardedConfig(sandbox)), "--placement", "rewarded_coins",
            "--app-user-id", "u1", "--watch-seconds", "32", "--json",
        ])
        await sandbox.shutdown()
        #expect(run.code == 0, "stderr: \(run.err)")
        let root = try #require(try JSONSerialization.jsonObject(with: Data(run.out.utf8)) as? [String: Any])
        #expect((root["reward"] as? [String: Any])?["validated"] as? Bool == true)
        let events = (root["events"] as? [[String: Any]])?.compactMap { $0["event"] as? String } ?? []
        #expect(
            events == [
                "impression", "video_start", "video_progress(25%)", "video_progress(50%)", "video_progress(75%)",
                "video_complete", "ad_closed",
            ])
        #expect(root["delivery_error"] is NSNull)
    }

    @Test func showRefusesToCloseARewardedAdBeforeTheMinimumViewTime() async throws {
        let sandbox = try await DemandSandbox.start()
        let run = try await mediate([
            "show", "--config", try writeConfig(rewardedConfig(sandbox)), "--placement", "rewarded_coins",
            "--app-user-id", "u1", "--watch-seconds", "5",
        ])
        await sandbox.shutdown()
        #expect(run.code == 1)
        #expect(run.out.contains("close refused") && run.out.contains("reward: not granted"))
    }

    @Test func conformancePassesForAWellBehavedNetwork() async throws {
        let sandbox = try await DemandSandbox.start()
        let config = try writeConfig(sandboxConfig(sandbox))
        let run = try await mediate(["conformance", "--config", config, "--network", "ao"])
        await sandbox.shutdown()
        #expect(run.code == 0, "\(run.out)")
        #expect(run.out.contains("PASS  fillIsWellFormed"))
        #expect(!run.out.contains("FAIL"))
    }

    @Test func conformanceExitsOneWhenAScenarioFails() async throws {
        // Not a sandbox (a demand sandbox's admin API would be told to fill): a server failing every request.
        let server = try LoopbackHTTPServer { _ in .respond(.text("", status: 500)) }
        defer { server.stop() }
        let config = try writeConfig(
            """
            {"networks": {"ao": {"type": "appopen", "base_url": "\(server.baseURL)/appopen"}},
             "placements": {"launch": {"format": "app_open", "lines": [{"network": "ao", "placement": "x", \
            "timeout_ms": 2000}]}}}
            """)
        let run = try await mediate(["conformance", "--config", config, "--network", "ao"])
        #expect(run.code == 1)
        #expect(run.out.contains("FAIL  fillIsWellFormed"))
    }

    @Test func unknownNetworkInAConfigurationNamesThePathAndExitsTwo() async throws {
        let config = try writeConfig(
            """
            {"networks": {"mars": {"type": "mars", "base_url": "http://127.0.0.1:9/v1/"}},
             "placements": {"home_tile": {"format": "tile", "lines": [
                {"network": "mars", "placement": "mock_tile_1"}, {"network": "gx", "placement": "home_banner"}]}}}
            """)
        let run = try await mediate(["compare", "--config", config, "--quiet"])
        #expect(run.code == 2)
        #expect(run.err.contains(#"placements.home_tile.lines[1].network: unknown network "gx""#))
    }

    @Test(arguments: [
        (#"{"networks": {}}"#, "networks: required"),
        (
            #"{"networks": {"x": {"type": "adsense", "base_url": "http://h/"}}, "placements": {}}"#,
            "networks.x.type: unknown type"
        ),
        (#"{"networks": {"x": {"type": "mars"}}, "placements": {}}"#, "networks.x.base_url: required"),
        (
            #"{"networks": {"x": {"type": "chartboost", "base_url": "http://127.0.0.1/"}}, "placements": {}}"#,
            "networks.x.app_id: required"
        ),
        (
            (#"{"networks": {"x": {"type": "mars", "base_url": "http://127.0.0.1/"}}, "placements": "#
                + #"{"p": {"format": "tile", "lines": [{"network": "x", "placement": "a", "timeout_ms": -1}]}}}"#),
            "placements.p.lines[0].timeout_ms"
        ),
        ("not json", "configuration: not valid JSON at line 1, column 2: unexpected \"o\", expected null"),
    ])
    func badConfigurationExitsTwoWithTheFieldAtFault(json: String, message: String) async throws {
        let run = try await mediate(["compare", "--config", try writeConfig(json), "--quiet"])
        #expect(run.code == 2)
        #expect(run.err.contains(message), "stderr: \(run.err)")
    }

    @Test func secretsAreNeverEchoed() async throws {
        let sandbox = try await DemandSandbox.start()
        let secret = "zz-very-secret-signature-zz"
        let config = try writeConfig(sandboxConfig(sandbox, signature: secret))
        let load = try await mediate(["load", "--config", config, "--placement", "banner", "--json"])
        let compare = try await mediate(["compare", "--config", config, "--requests", "3", "--placement", "banner"])
        let broken = try writeConfig(
            sandboxConfig(sandbox, signature: secret).replacingOccurrences(
                of: "\"timeout_ms\": 30000}]},", with: "\"timeout_ms\": 0}]},"))
        let bad = try await mediate(["compare", "--config", broken])
        await sandbox.shutdown()
        for run in [load, compare, bad] {
            #expect(!run.out.contains(secret) && !run.err.contains(secret))
        }
        #expect(
            load.out.contains("unauthorized"), "the wrong signature was rejected, and the error still does not show it")
        #expect(bad.code == 2)
    }

    @Test(arguments: [
        ["compare", "--requests", "0"], ["compare", "--format", "xml"], ["compare", "--no-such-flag"],
        ["sandbox", "--port", "70000"],
    ])
    func badUsageExitsTwo(arguments: [String]) async throws {
        #expect(try await mediate(arguments).code == 2)
    }

    @Test func sandboxCommandPrintsItsBaseURLs() async throws {
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(
            "mediate")
        // The sandbox runs until it is stopped: killed once it has printed its admin URL, or after 60 s.
        let run = try await ChildProcess.run(
            binary.path, ["sandbox", "--port", "0"], killWhen: { $0.contains("admin") }, deadline: .seconds(60))
        let text = run.out
        #expect(!run.timedOut)
        #expect(text.contains("growthcat  http://127.0.0.1:"))
        #expect(text.contains("mars       http://127.0.0.1:") && text.contains("/mars/v1/"))
    }

    @Test func sandboxDemoWritesAConfigurationThatPointsAtItself() async throws {
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(
            "mediate")
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("demo-\(UUID().uuidString).json").path
        let run = try await ChildProcess.run(
            binary.path, ["sandbox", "--demo", "standard", "--port", "0", "--write-config", path],
            killWhen: { $0.contains("config") }, deadline: .seconds(60))
        #expect(!run.timedOut)
        let marsLine = try #require(run.out.split(separator: "\n").first { $0.hasPrefix("mars ") })
        let marsURL = String(marsLine.dropFirst("mars".count)).trimmingCharacters(in: .whitespaces)
        let root = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
        let mars = try #require((root["networks"] as? [String: Any])?["mars"] as? [String: Any])
        #expect(mars["base_url"] as? String == marsURL, "the configuration points at the sandbox that wrote it")
        #expect((root["placements"] as? [String: Any])?["home_tile"] != nil, "the demo's placements")
    }
}

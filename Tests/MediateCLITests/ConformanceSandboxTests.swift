import AdMediationTesting
import DemandSandbox
import Foundation
import Testing

/// `mediate conformance` drives a demand sandbox through its admin API (issue 33 item 1: the fill it needs, and the
/// no-fill, failing and slow answers), or says why it cannot and counts what it cannot provoke as skips.
@Suite("mediate conformance and the sandbox's admin API", .serialized, .timeLimit(.minutes(3)))
struct ConformanceSandboxTests {
    static let scenarios = [
        "fillIsWellFormed", "noFillIsAValue", "errorsMapToTheTaxonomy", "completionHappensExactlyOnce",
        "cancellationIsHonouredPromptly", "timeoutsAreHonoured", "noEventsBeforeLoadOrAfterInvalidation",
        "impressionIsReportedOncePerShow", "privacySignalsReachTheWire", "concurrentLoadsAreSafe",
    ]

    @Test("a configured sandbox that fills 20 % and fails 30 % gets every scenario run, then its own scenario back")
    func aConfiguredSandboxIsDrivenAndRestored() async throws {
        let own = SandboxScenario(
            seed: 5,
            networks: ["appopen": NetworkScenario(fillRate: 0.2, faults: [Fault(.status, rate: 0.3, status: 503)])])
        let sandbox = try await DemandSandbox.start(scenario: own)
        let run = try await mediate(["conformance", "--config", try Self.config(sandbox), "--network", "ao"])
        let after = sandbox.scenario
        await sandbox.shutdown()
        #expect(run.code == 0, "\(run.out)\(run.err)")
        for scenario in Self.scenarios {
            #expect(run.out.contains("PASS  \(scenario)\n"), "\(scenario): \(run.out)")
        }
        #expect(run.out.split(separator: "\n").last == "15 passed, 0 skipped, 0 failed")
        #expect(after.seed == 5)
        #expect(after.networks["appopen"]?.fillRate == 0.2, "the sandbox's fill rate is back")
        #expect(after.networks["appopen"]?.faults.map(\.status) == [503], "its faults are back")
        #expect(after.placements.isEmpty, "no placement scenario left behind")
    }

    /// One app-open line on `sandbox`, with the sandbox's own ad unit (Google's test unit always fills).
    static func config(_ sandbox: RunningSandbox, unit: String = "ca-app-pub-sandbox/app_open_main") throws -> String {
        try writeConfig(
            """
            {"networks": {"ao": {"type": "appopen", "base_url": "\(sandbox.appOpenBaseURL)"}},
             "placements": {"launch": {"format": "app_open", "lines": [{"network": "ao", "placement": "\(unit)", \
            "timeout_ms": 2000}]}}}
            """)
    }

    @Test("a placement the sandbox fills whatever its scenario skips the no-fill scenario, saying why")
    func aTestAdUnitSkipsWhatItCannotShow() async throws {
        let sandbox = try await DemandSandbox.start()
        let config = try Self.config(sandbox, unit: "ca-app-pub-3940256099942544/5575463023")
        let run = try await mediate(["conformance", "--config", config, "--network", "ao"])
        await sandbox.shutdown()
        #expect(run.code == 0, "\(run.out)\(run.err)")
        // Google's test ad unit always fills (specs/app-open.md); its faults still apply, so a failure can be shown.
        #expect(
            run.out.contains(
                "SKIP  noFillIsAValue: the sandbox was set to answer ca-app-pub-3940256099942544/5575463023 with no "
                    + "fill but a probe got a fill"), "\(run.out)")
        #expect(run.out.contains("PASS  errorsMapToTheTaxonomy"))
        #expect(run.out.split(separator: "\n").last == "14 passed, 1 skipped, 0 failed", "\(run.out)")
    }

    @Test("a server without the admin API is named on stderr, and the scenarios it cannot provoke are skips")
    func aPlainServerIsNamedAndItsSkipsCounted() async throws {
        // Every request, /admin/scenario included, is answered 204: no fill, and not a sandbox.
        let server = try LoopbackHTTPServer { _ in .respond(.text("", status: 204)) }
        defer { server.stop() }
        let config = try writeConfig(
            """
            {"networks": {"ao": {"type": "appopen", "base_url": "\(server.baseURL)/appopen"}},
             "placements": {"launch": {"format": "app_open", "lines": [{"network": "ao", "placement": "x", \
            "timeout_ms": 2000}]}}}
            """)
        let run = try await mediate(["conformance", "--config", config, "--network", "ao"])
        #expect(
            run.err.contains(
                "ao is not served by a demand sandbox (GET \(server.baseURL)/admin/scenario answered 204)"),
            "\(run.err)")
        let lines = run.out.split(separator: "\n").map(String.init)
        let skipped = lines.filter { $0.hasPrefix("SKIP") }
        #expect(
            Set(skipped.compactMap { $0.dropFirst(6).split(separator: ":").first.map(String.init) })
                == [
                    "noFillIsAValue", "errorsMapToTheTaxonomy", "cancellationIsHonouredPromptly", "timeoutsAreHonoured",
                ])
        let passed = lines.filter { $0.hasPrefix("PASS") }.count
        let failed = lines.filter { $0.hasPrefix("FAIL") }.count
        #expect(failed > 0, "a server that never fills fails the fill scenarios")
        #expect(lines.last == "\(passed) passed, 4 skipped, \(failed) failed")
        #expect(passed + 4 + failed == 15)
        #expect(run.code == 1)
    }
}

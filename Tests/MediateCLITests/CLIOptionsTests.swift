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
}

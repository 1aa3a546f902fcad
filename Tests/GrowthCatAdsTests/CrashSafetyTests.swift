import DemandSandbox
import Foundation
import TestSupport
import Testing

/// Runs the crash child; kills it with SIGKILL after `killAfterMs` (nil: let it finish). Returns the sequence
/// numbers it acknowledged (printed after trackAdEvent returned). The child is watched off the cooperative pool.
func runChild(_ arguments: [String], killAfterMs: Int?) async throws -> [String] {
    let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(
        "growthcat-crash-child")
    let result = try await ChildProcess.run(
        binary.path, arguments, killAfter: killAfterMs.map { .milliseconds($0) }, deadline: .seconds(60))
    if result.timedOut { throw ChildProcessError(description: "the crash child ran past its 60 s deadline") }
    return result.out.split(separator: "\n").map(String.init)
}

@Suite("GrowthCat crash safety", .serialized, .timeLimit(.minutes(2)))
struct CrashSafetyTests {
    /// Trials: 20 by default; `GC_CRASH_TRIALS=500 swift test --filter CrashSafety` for a soak.
    @Test func everyAcknowledgedEventArrivesAfterSIGKILLAtRandomMoments() async throws {
        let trials = Int(ProcessInfo.processInfo.environment["GC_CRASH_TRIALS"] ?? "") ?? 20
        let sandbox = try await DemandSandbox.start()
        let queue = FileManager.default.temporaryDirectory.appendingPathComponent("crash-\(UUID().uuidString).sqlite")
            .path
        var acknowledged: Set<String> = []
        var killedMidway = 0
        var rng = SystemRandomNumberGenerator()
        for trial in 0..<trials {
            let lines = try await runChild(
                [sandbox.growthcatBaseURL, queue, String(trial * 1000), "200"],
                killAfterMs: Int.random(in: 20...250, using: &rng))
            acknowledged.formUnion(lines.filter { Int($0) != nil })
            if !lines.contains("done") { killedMidway += 1 }
        }
        let final = try await runChild([sandbox.growthcatBaseURL, queue, "flush"], killAfterMs: nil)
        #expect(final.last?.hasPrefix("flushed") == true)
        let records = sandbox.growthcatRecords
        let delivered = Set(records.events.compactMap { $0.metadata["n"] })
        let missing = acknowledged.subtracting(delivered)
        #expect(missing.isEmpty, "acknowledged but never delivered: \(missing.sorted().prefix(10))")
        // Each event is one id: a sequence number never arrives under two different ids.
        let idsPerNumber = Dictionary(grouping: records.events, by: { $0.metadata["n"] ?? "" }).mapValues(
            \.count)
        #expect(idsPerNumber.values.allSatisfy { $0 == 1 }, "an event was re-created instead of replayed")
        #expect(killedMidway > trials / 2, "most trials should really be killed mid-run (\(killedMidway) of \(trials))")
        print(
            ("crash safety: \(trials) trials, \(killedMidway) killed mid-run, \(acknowledged.count) events "
                + ("acknowledged, \(delivered.count) delivered,"
                    + " \(records.duplicates) duplicate deliveries (same id, counted once)"))
        )
        await sandbox.shutdown()
        try? FileManager.default.removeItem(atPath: queue)
    }
}

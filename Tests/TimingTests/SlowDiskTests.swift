import AdMediation
import AdMediationTesting
import AdNetworkConformance
import AdStorage
import Foundation
import GRDB
import Testing

/// In the timing target: the mediation must answer within its wall-clock deadline.
/// A disk that does not answer: another connection holds SQLite's write lock, so every write of the store under
/// test waits in SQLite's busy handler — a thread blocked in I/O, as on a slow or stalled disk.
@Suite("Storage on a slow disk", .timeLimit(.minutes(1)))
struct SlowDiskTests {
    @Test func mediationAnswersWithinItsDeadlineWhileEventWritesAreStalled() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("slow-disk-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("events.sqlite").path
        let store = try EventQueueStore(path: path)

        // Hold the write lock for 3 s from a second connection (on GRDB's own queue, not the pool).
        let holder = try DatabaseQueue(path: path)
        let locked = Latched()
        let lockHolder = Task {
            try await holder.write { db in
                try db.execute(sql: "INSERT INTO event_queue (event_id, payload) VALUES ('holder', x'00')")
                locked.set()
                Thread.sleep(forTimeInterval: 3)
            }
        }
        await waitUntil { locked.value }

        // Sixteen appends stall on the lock. Were they run on the cooperative pool, each would hold a pool thread
        // (more than this machine's two) until the lock is released.
        let appends = (0..<16).map { i in
            Task { try await store.append(eventID: "e\(i)", payload: Data("{}".utf8), cap: 100) }
        }

        // Meanwhile a mediation over other networks answers within its deadline.
        let network = ScriptedAdNetwork(id: "n", fallback: .fill(ecpm: 1, latency: .milliseconds(20)))
        let mediator = try Mediator(
            networks: [network],
            configuration: .init(placements: [
                "p": PlacementConfiguration(
                    format: .interstitial, lines: [.init(network: "n", placement: "x", timeout: .milliseconds(900))],
                    deadline: .milliseconds(1000))
            ]))
        let outcome = await mediator.loadWithTrace(AdRequest(placement: "p", format: .interstitial))
        #expect(try outcome.result.get().ad?.networkID == "n", "the mediation filled instead of waiting for the disk")
        #expect(outcome.trace.lines.first?.outcome.name == "fill")
        #expect(locked.stillHeld, "the lock was still held when the mediation answered, so the appends were stalled")

        try await lockHolder.value
        for append in appends { _ = try await append.value }
        #expect(try await store.count() == 17, "every stalled append landed once the disk answered")
    }
}

/// A flag set on GRDB's queue, read by the test; `stillHeld` is true until the holder's transaction ends.
private final class Latched: Sendable {
    private let state = LockedValue((set: false, setAt: ContinuousClock.Instant?.none))
    func set() { state.withLock { $0 = (true, ContinuousClock.now) } }
    var value: Bool { state.withLock { $0.set } }
    var stillHeld: Bool {
        state.withLock { s in s.setAt.map { ContinuousClock.now - $0 < .seconds(3) } ?? false }
    }
}

private func waitUntil(_ condition: () -> Bool) async {
    let deadline = ContinuousClock.now + .seconds(10)
    while !condition(), ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(1)) }
    #expect(condition(), "the condition did not hold within 10 s")
}

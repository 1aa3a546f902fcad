import AdMediation
import Foundation
import Synchronization
import Testing

// `make tsan-selfcheck` (part of `make tsan`): proof that ThreadSanitizer sees the project's code. Run with
// TSAN_FIXTURE=1 in the ThreadSanitizer build, `racyCounterIsReported` must make ThreadSanitizer print a data race
// and `lockedCounterIsNotReported` must not. Without TSAN_FIXTURE both are skipped, so the plain suite never runs the
// deliberate race.

/// Whether the fixture runs: only when `make tsan-selfcheck` asks for it.
let fixtureEnabled = ProcessInfo.processInfo.environment["TSAN_FIXTURE"] == "1"

/// A counter with no synchronisation at all: the race is the point.
// `@unchecked Sendable` is a lie on purpose: two threads write `value` with nothing between them, which is the data
// race ThreadSanitizer must report. Nothing but this fixture uses it.
final class UnsynchronisedCounter: @unchecked Sendable {
    var value = 0
}

/// Counts the threads that reached the start and those that finished (atomics: ThreadSanitizer sees them).
final class TwoThreadGate: Sendable {
    let arrived = Atomic(0)
    let finished = Atomic(0)
}

/// Runs `body` on two threads at once, `rounds` times each, and waits for both. Both threads wait at a start line
/// until the other is there, so their loops overlap: without it the first thread can finish before the second starts
/// and the thread machinery's own locks can order the two loops, hiding the race from ThreadSanitizer.
/// Both waits end after 60 s at the latest (a thread that never starts), so the fixture cannot hang the run.
func onTwoThreads(rounds: Int, _ body: @escaping @Sendable () -> Void) {
    let gate = TwoThreadGate()
    let deadline = ContinuousClock.now + .seconds(60)
    for _ in 0..<2 {
        let thread = Thread {
            gate.arrived.add(1, ordering: .relaxed)
            while gate.arrived.load(ordering: .relaxed) < 2 && ContinuousClock.now < deadline {}
            for _ in 0..<rounds { body() }
            gate.finished.add(1, ordering: .releasing)
        }
        thread.start()
    }
    while gate.finished.load(ordering: .acquiring) < 2 && ContinuousClock.now < deadline {
        Thread.sleep(forTimeInterval: 0.001)
    }
}

@Suite(.enabled(if: fixtureEnabled, "a deliberate data race for ThreadSanitizer; TSAN_FIXTURE=1 runs it"))
struct TSanFixtureTests {
    @Test func racyCounterIsReported() {
        let counter = UnsynchronisedCounter()
        onTwoThreads(rounds: 10_000) { counter.value += 1 }
        // No expectation on the total: lost updates are the race's doing; ThreadSanitizer's report is the outcome.
        #expect(counter.value > 0)
    }

    @Test func lockedCounterIsNotReported() {
        let counter = LockedValue(UnsynchronisedCounter())
        onTwoThreads(rounds: 10_000) { counter.withLock { $0.value += 1 } }
        #expect(counter.withLock { $0.value } == 20_000)
    }
}

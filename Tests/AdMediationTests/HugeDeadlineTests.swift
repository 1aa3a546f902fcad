import AdMediationTesting
import Testing

@testable import AdMediation

/// A caller's deadline of `.seconds(Int64.max)` means "very far", never "already past" (issue 31 item 8): instants
/// saturate instead of wrapping, so a mediation given such a timeout waits for its lines.
@Suite("Huge deadlines", .timeLimit(.minutes(1)))
struct HugeDeadlineTests {
    @Test func anInstantPlusAHugeDurationSaturatesInsteadOfWrapping() {
        let now = AdInstant(nanoseconds: 3_600_000_000_000)
        #expect(now + .seconds(Int64.max) == AdInstant(nanoseconds: .max))
        #expect(AdInstant(nanoseconds: -3_600_000_000_000) - .seconds(Int64.max) == AdInstant(nanoseconds: .min))
        #expect(now + .seconds(Int64.max) > now)
        #expect(now + .seconds(1) == AdInstant(nanoseconds: 3_601_000_000_000))
    }

    @Test func aMediationWithAHugeCallerTimeoutWaitsForItsLine() async throws {
        let a = GateNetwork(id: "a")
        // An hour after the clock's origin: `now + Int64.max ns` would wrap into the past.
        let clock = ManualAdClock(start: AdInstant(nanoseconds: 3_600_000_000_000))
        let mediator = try Mediator(
            networks: [a], configuration: .init(placements: ["p": placement([.init(network: "a", placement: "a1")])]),
            clock: clock)
        let request = AdRequest(placement: "p", format: .interstitial, timeout: .seconds(Int64.max))
        let task = Task { await mediator.loadWithTrace(request) }
        await a.waitForLoads()
        a.answer(.success(.filled(a.fill("late-but-in-time"))))
        let outcome = await task.value
        #expect(try outcome.result.get().ad?.creative.id == "late-but-in-time")
    }
}

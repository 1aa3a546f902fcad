import AdMediationTesting
import Foundation
import Testing

@testable import AdMediation

/// A step's lines run one after another on one task while each answers at once; a line that suspends gives the
/// caller its thread back, and the lines after it still start, each running load keeping a task of its own.
@Suite("Mediator: a step's lines on one task", .timeLimit(.minutes(2)))
struct LineBatchTests {
    /// Three parallel lines: an instant no fill, a line that waits for the test, an instant fill below it.
    func threeLines() throws -> (Mediator, GateNetwork, ScriptedAdNetwork) {
        let instant = ScriptedAdNetwork(
            id: "instant", clock: ManualAdClock(),
            script: ["none": [.noFill()], "fill": [.fill(ecpm: 1)]])
        let gate = GateNetwork(id: "gate", honoursCancellation: true)
        let mediator = try Mediator(
            networks: [instant, gate],
            configuration: .init(placements: [
                "p": placement([
                    .init(network: "instant", placement: "none"), .init(network: "gate", placement: "g"),
                    .init(network: "instant", placement: "fill"),
                ])
            ]), clock: ManualAdClock())  // a clock nobody advances: on a loaded machine no line may time out
        return (mediator, gate, instant)
    }

    @Test func aLineAfterOneThatSuspendsStartsWithoutWaitingForIt() async throws {
        let (mediator, gate, instant) = try threeLines()
        let task = Task { await mediator.loadWithTrace(interstitial) }
        await gate.waitForLoads()
        // The gate has not answered: the line after it was started anyway, and answered.
        await until { instant.loadCount == 2 }
        #expect(instant.requests.map(\.placement) == ["none", "fill"])
        gate.answer(.success(.noFill(NoFill(reason: "none"))))
        let outcome = await task.value
        #expect(outcome.trace.winnerIndex == 2, "the lower line wins once the suspended line has no fill")
        #expect(try outcome.result.get().ad?.networkID == "instant")
    }

    @Test func theSuspendedLineStillWinsByPriorityWhenItFills() async throws {
        let (mediator, gate, instant) = try threeLines()
        let task = Task { await mediator.loadWithTrace(interstitial) }
        await gate.waitForLoads()
        await until { instant.loadCount == 2 }
        gate.answer(.success(.filled(gate.fill("from-gate"))))
        let outcome = await task.value
        #expect(outcome.trace.winnerIndex == 1)
        #expect(try outcome.result.get().ad?.creative.id == "from-gate")
    }

    @Test func cancellingTheCallerCancelsTheSuspendedLinesOwnTask() async throws {
        let (mediator, gate, _) = try threeLines()
        let task = Task { await mediator.loadWithTrace(interstitial) }
        await gate.waitForLoads()
        task.cancel()
        _ = await task.value
        await until { gate.cancellations == 1 }
        #expect(gate.waiting == 0, "the gate's load ended with its cancellation")
    }
}

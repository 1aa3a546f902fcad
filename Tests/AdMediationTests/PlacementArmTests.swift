import AdMediationTesting
import AdNetworkConformance
import Foundation
import Testing

@testable import AdMediation

/// A/B arms of a placement: weighted, sticky per user, each with its own waterfall, its label on the trace.
@Suite("Placement A/B arms", .timeLimit(.minutes(1)))
struct PlacementArmTests {
    static func setUp(weights: (Double, Double) = (1, 1)) throws -> (Mediator, ScriptedAdNetwork) {
        let network = ScriptedAdNetwork(
            id: "n", clock: ManualAdClock(), script: ["a": [.fill(ecpm: 1)], "b": [.fill(ecpm: 2)]])
        let mediator = try Mediator(
            networks: [network],
            configuration: .init(placements: [
                "p": PlacementConfiguration(
                    format: .interstitial, lines: [.init(network: "n", placement: "a")],
                    arms: [
                        PlacementArm(label: "control", weight: weights.0),
                        PlacementArm(label: "test-b", weight: weights.1, lines: [.init(network: "n", placement: "b")]),
                    ])
            ]), clock: ManualAdClock())
        return (mediator, network)
    }

    static func request(user: String?) -> AdRequest {
        AdRequest(placement: "p", format: .interstitial, userID: user)
    }

    @Test func eachArmRunsItsOwnWaterfallUnderItsLabel() async throws {
        let (mediator, _) = try Self.setUp()
        var seen: [String: Set<String>] = [:]
        for user in 0..<40 {
            let outcome = await mediator.loadWithTrace(Self.request(user: "u\(user)"))
            let ad = try #require(try outcome.result.get().ad)
            seen[outcome.trace.abLabel ?? "none", default: []].insert(ad.creative.id.components(separatedBy: "-")[1])
            #expect(ad.revenue.line?.abLabel == outcome.trace.abLabel)
            ad.invalidate()
        }
        #expect(seen == ["control": ["a"], "test-b": ["b"]])
    }

    @Test func aUserStaysInOneArm() async throws {
        let (mediator, _) = try Self.setUp()
        var labels: Set<String?> = []
        for _ in 0..<20 {
            let outcome = await mediator.loadWithTrace(Self.request(user: "same-user"))
            outcome.result.success?.ad?.invalidate()
            labels.insert(outcome.trace.abLabel)
        }
        #expect(labels.count == 1)
    }

    @Test func trafficSplitsByWeight() async throws {
        let (mediator, _) = try Self.setUp(weights: (3, 1))
        var control = 0
        for user in 0..<2000 {
            let outcome = await mediator.loadWithTrace(Self.request(user: "user-\(user)"))
            outcome.result.success?.ad?.invalidate()
            if outcome.trace.abLabel == "control" { control += 1 }
        }
        #expect((1400...1600).contains(control), "3:1 of 2000 is 1500 control, got \(control)")
    }
}

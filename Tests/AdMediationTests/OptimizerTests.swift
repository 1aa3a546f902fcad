import AdMediationTesting
import AdNetworkConformance
import AdStorage
import Foundation
import Testing

@testable import AdMediation

/// The self-ordering waterfall: learned order, publisher constraints, drift, determinism and persistence. Scripted
/// lines answer at once; the optimizer is seeded.
@Suite("Self-ordering waterfall", .timeLimit(.minutes(1)))
struct OptimizerTests {
    /// Two sequential lines on one scripted network: `cheap` (configured first, always fills at 1.0) and `rich`
    /// (configured second, fills at `richPrice` with `richFill` of requests, drawn from a seeded generator).
    static func setUp(
        richPrice: Double = 4.0, optimizer: OptimizerConfiguration? = OptimizerConfiguration(exploration: 0.2, seed: 7)
    ) throws -> (Mediator, ScriptedAdNetwork) {
        let network = ScriptedAdNetwork(
            id: "n", clock: ManualAdClock(),
            script: [
                "cheap": [.fill(ecpm: 1.0)], "rich": [.fill(ecpm: richPrice)],
            ])
        let mediator = try Mediator(
            networks: [network],
            configuration: .init(placements: [
                "p": PlacementConfiguration(
                    format: .interstitial, mode: .sequential,
                    lines: [
                        .init(network: "n", placement: "cheap", ecpm: 1.0),
                        .init(network: "n", placement: "rich", ecpm: 1.0),
                    ],
                    optimizer: optimizer)
            ]), clock: ManualAdClock())
        return (mediator, network)
    }

    static func revenue(_ mediator: Mediator, requests: Int) async throws -> Double {
        var total = 0.0
        for _ in 0..<requests {
            let ad = try await mediator.loadWithTrace(interstitial).result.get().ad
            total += ad?.ecpm ?? 0
            ad?.invalidate()
        }
        return total
    }

    @Test func aLineThatEarnsMoreMovesAboveTheLineConfiguredFirst() async throws {
        let (mediator, _) = try Self.setUp()
        _ = try await Self.revenue(mediator, requests: 200)
        let outcome = await mediator.loadWithTrace(interstitial)
        outcome.result.success?.ad?.invalidate()
        let stats = mediator.lineStatistics(of: "p")
        #expect((stats["n/rich"]?.fills ?? 0) > 0, "the second line was explored")
        let last50 = try await Self.revenue(mediator, requests: 50)
        #expect(last50 >= 0.8 * 50 * 4.0, "most of the last 50 requests went to the 4.0 line first (earned \(last50))")
    }

    @Test func theStaticOrderNeverLearns() async throws {
        let (mediator, network) = try Self.setUp(optimizer: nil)
        let earned = try await Self.revenue(mediator, requests: 50)
        #expect(earned == 50 * 1.0)
        #expect(network.requests.allSatisfy { $0.placement == "cheap" })
    }

    @Test func aPinnedLineKeepsItsPosition() async throws {
        let (mediator, network) = try Self.setUp(
            optimizer: OptimizerConfiguration(exploration: 0.5, pinned: [0], seed: 7))
        _ = try await Self.revenue(mediator, requests: 100)
        #expect(
            network.requests.allSatisfy { $0.placement == "cheap" },
            "the pinned first line fills every time, so it always wins")
    }

    @Test func theSameSeedGivesTheSameOrders() async throws {
        func orders() async throws -> [[Int]] {
            let (mediator, _) = try Self.setUp()
            var all: [[Int]] = []
            for _ in 0..<100 {
                let outcome = await mediator.loadWithTrace(interstitial)
                outcome.result.success?.ad?.invalidate()
                all.append(outcome.trace.order)
            }
            return all
        }
        let first = try await orders(), second = try await orders()
        #expect(first == second)
        #expect(Set(first).count == 2, "both orders were tried")
    }

    @Test func theOrderFollowsAPriceThatDrifts() async throws {
        var optimizer = WaterfallOptimizer(
            configuration: OptimizerConfiguration(exploration: 0.2, halfLifeRequests: 100, seed: 3), seed: 0)
        let lines = [WaterfallLine(network: "n", placement: "a"), WaterfallLine(network: "n", placement: "b")]
        func run(_ prices: [Double], requests: Int) -> [Int] {
            var firsts: [Int] = []
            for _ in 0..<requests {
                let order = optimizer.order(lines)
                firsts.append(order[0])
                // Sequential: the first line fills (both always fill), the second is not reached.
                var traced = lines.map {
                    LineTrace(
                        network: $0.network, placement: $0.placement, outcome: .skipped(.notReached), latency: nil,
                        ecpm: nil)
                }
                traced[order[0]] = LineTrace(
                    network: "n", placement: lines[order[0]].placement, outcome: .fill, latency: nil,
                    ecpm: prices[order[0]])
                optimizer.observe(
                    MediationTrace(placement: "p", lines: traced, winnerIndex: order[0], duration: .zero), lines: lines)
            }
            return firsts
        }
        let before = run([1.0, 3.0], requests: 400)
        #expect(before.suffix(100).count(where: { $0 == 1 }) >= 80, "b (3.0) leads first")
        let after = run([3.0, 1.0], requests: 1500)
        #expect(after.suffix(100).count(where: { $0 == 0 }) >= 80, "after the drift a (now 3.0) leads")
    }

    @Test func whatWasLearnedSurvivesARestartThroughTheStore() async throws {
        let store = InMemoryStateStore()
        let (trained, _) = try Self.setUp()
        _ = try await Self.revenue(trained, requests: 200)
        try await trained.saveOptimizerState(to: store)
        let (fresh, _) = try Self.setUp(optimizer: OptimizerConfiguration(exploration: 0, seed: 9))
        try await fresh.restoreOptimizerState(from: store)
        #expect(fresh.lineStatistics(of: "p") == trained.lineStatistics(of: "p"))
        let outcome = await fresh.loadWithTrace(interstitial)
        #expect(outcome.trace.order == [1, 0], "the first request after the restart already puts the 4.0 line first")
    }

    @Test func theSQLiteStoreKeepsTheStateAcrossReopening() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "optimizer-\(UUID().uuidString).sqlite"
        ).path
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let (trained, _) = try Self.setUp()
        _ = try await Self.revenue(trained, requests: 100)
        try await trained.saveOptimizerState(to: try SQLiteStateStore(path: path))
        let (fresh, _) = try Self.setUp()
        try await fresh.restoreOptimizerState(from: try SQLiteStateStore(path: path))
        #expect(!fresh.lineStatistics(of: "p").isEmpty)
        #expect(fresh.lineStatistics(of: "p") == trained.lineStatistics(of: "p"))
    }

    @Test func aDamagedSavedStateIsIgnoredNotTrusted() async throws {
        let store = InMemoryStateStore()
        try await store.save(
            Data(#"{"n/rich": {"attempts": 1, "fills": 50, "timeouts": 0, "ecpmSum": 1e300, "ecpmSquares": -1}}"#.utf8),
            key: "optimizer/p")
        let (mediator, _) = try Self.setUp()
        try await mediator.restoreOptimizerState(from: store)
        #expect(mediator.lineStatistics(of: "p").isEmpty)
        try await store.save(Data("not json".utf8), key: "optimizer/p")
        try await mediator.restoreOptimizerState(from: store)
        #expect(mediator.lineStatistics(of: "p").isEmpty)
    }
}

extension Result {
    var success: Success? { try? get() }
}

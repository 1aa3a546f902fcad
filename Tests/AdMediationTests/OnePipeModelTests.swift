import AdMediationTesting
import Foundation
import Testing

@testable import AdMediation

/// A model-based test of the whole event and auction pipe (issue 42 item 7): random sequences over the path an ad
/// takes (bare, through a Mediator, through a nested one) × the prices of two bidders × renderer signals, taps, clock
/// steps and the close × faults of the network's event delivery (a delivery that fails, deliveries held until the
/// user is done), checked against a reference model written from the written rules, not from the code:
///
/// - the standard full-screen contract (`StandardFullScreenRules`): "`impression` when it renders, one `click`, the
///   close button at once, `ad_closed` when it goes"; a click only on a seen ad, and what the user saw is local
///   truth (a failed impression delivery never stops the click);
/// - one pipe: the network that filled receives one record per event, for its own ad, stamped with its signal's
///   instant, on every path; the other network receives nothing;
/// - the unified auction (specs/openrtb-bidder.md): the highest price wins, a bid beats a waterfall line only when
///   strictly higher, first price; every priced ad is settled exactly once — the winner `won` at its price, the loser
///   `lost` (102) at the winner's price — by the outermost decider;
/// - no tap waits on delivery: a script whose deliveries are held runs to its end before any is released.
///
/// `MODEL_RUNS=N` runs N sequences (default 300; docs/RELIABILITY.md gives the figures of a 10⁵ run).
@Suite("One pipe against a reference model", .timeLimit(.minutes(10)))
struct OnePipeModelTests {
    enum Step: Sendable {
        case tap
        case advance(milliseconds: Int)
    }

    /// One generated sequence.
    struct Sequence: CustomStringConvertible {
        var path: AdPath
        var priceA: Double
        var priceB: Double
        var steps: [Step]
        var failing: Set<AdEvent>
        var held: Bool

        var description: String {
            "\(path) A=\(priceA) B=\(priceB) steps=\(steps) failing=\(failing.map(\.name).sorted()) held=\(held)"
        }
    }

    /// What the reference expects.
    struct Expected {
        var winner: String
        var settlements: [String: [AuctionResult]]
        /// The events the winner's network receives, with their instants (milliseconds from the start).
        var events: [(AdEvent, Int)]
    }

    /// The reference model, from the rules above.
    static func expected(_ s: Sequence) -> Expected {
        var winner = "A"
        var settlements: [String: [AuctionResult]] = ["A": [], "B": []]
        switch s.path {
        case .bare:
            break
        case .mediated:
            // Two bidders of one placement, A configured first: the higher price wins, a tie goes to the first.
            winner = s.priceB > s.priceA ? "B" : "A"
        case .nested:
            // A bids in the inner mediator, a line of the outer one; B bids in the outer: B wins only when strictly
            // higher than the line's price.
            winner = s.priceB > s.priceA ? "B" : "A"
        }
        if s.path != .bare {
            let (winPrice, loser) = winner == "A" ? (s.priceA, "B") : (s.priceB, "A")
            settlements[winner] = [.won(clearingPrice: winPrice)]
            settlements[loser] = [.lost(reason: .lostToHigherBid, winningPrice: winPrice)]
        }
        var events: [(AdEvent, Int)] = [(.impression, 0)]
        var now = 0
        var clicked = false
        for step in s.steps {
            switch step {
            case .tap:
                if !clicked {
                    clicked = true
                    events.append((.click, now))
                }
            case .advance(let ms):
                now += ms
            }
        }
        events.append((.closed, now))
        return Expected(winner: winner, settlements: settlements, events: events)
    }

    /// A network for the model: it records every delivery attempt (before failing it when its event is in `failing`)
    /// and every settlement; with `held`, deliveries wait for the gate.
    final class ModelNetwork: AdNetwork {
        let id: String
        let capabilities = AdNetworkCapabilities(formats: AdFormat.Kind.everyTested, reportsPrice: true)
        let price: Double
        let failing: Set<AdEvent>
        let gate: Gate?
        private let state = LockedValue<(records: [AdEventRecord], settled: [AuctionResult])>(([], []))

        init(id: String, price: Double, failing: Set<AdEvent>, gate: Gate?) {
            self.id = id
            self.price = price
            self.failing = failing
            self.gate = gate
        }

        var records: [AdEventRecord] { state.withLock { $0.records } }
        var settled: [AuctionResult] { state.withLock { $0.settled } }

        func load(_ request: AdRequest) async throws -> AdLoadResult {
            .filled(
                LoadedAd(
                    networkID: id, placement: request.placement, format: request.format,
                    creative: AdCreative(id: id, kind: "image"), ecpm: price, loadedAt: .zero,
                    reporter: Reporter(network: self), pricePrecision: .exact))
        }

        struct Reporter: AdEventReporter {
            let network: ModelNetwork
            func deliver(_ record: AdEventRecord) async throws -> AdEventDelivery {
                if let gate = network.gate { await gate.wait() }
                network.state.withLock { $0.records.append(record) }
                if network.failing.contains(record.event) { throw AdError(.server(status: 503), "events down") }
                return .delivered
            }
            func settle(_ result: AuctionResult, for ad: LoadedAd) {
                network.state.withLock { $0.settled.append(result) }
            }
        }
    }

    /// Loads the ad of `s` from networks `a` and `b` by its path.
    static func load(_ s: Sequence, a: ModelNetwork, b: ModelNetwork, clock: ManualAdClock) async throws -> LoadedAd? {
        switch s.path {
        case .bare:
            return try await a.load(interstitial).ad
        case .mediated:
            let mediator = try Mediator(
                networks: [a, b],
                configuration: .init(placements: [
                    "p": PlacementConfiguration(
                        format: .interstitial, lines: [],
                        bidders: [BidderLine(network: "A", placement: "a"), BidderLine(network: "B", placement: "b")])
                ]), clock: clock)
            return try await mediator.load(interstitial).ad
        case .nested:
            let inner = try Mediator(
                id: "inner", networks: [a],
                configuration: .init(placements: [
                    "ip": PlacementConfiguration(
                        format: .interstitial, lines: [], bidders: [BidderLine(network: "A", placement: "a")])
                ]), clock: clock)
            let outer = try Mediator(
                id: "outer", networks: [inner, b],
                configuration: .init(placements: [
                    "p": PlacementConfiguration(
                        format: .interstitial, lines: [WaterfallLine(network: "inner", placement: "ip", ecpm: 100)],
                        bidders: [BidderLine(network: "B", placement: "b")])
                ]), clock: clock)
            return try await outer.load(interstitial).ad
        }
    }

    static func generate(_ random: inout SplitMix64) -> Sequence {
        let path = AdPath.allCases[Int(random.next() % 3)]
        let prices: [Double] = [0.5, 1, 1.25, 2, 3.5]
        var steps: [Step] = []
        for _ in 0..<Int(random.next() % 6) {
            steps.append(random.next() % 2 == 0 ? .tap : .advance(milliseconds: 1 + Int(random.next() % 2000)))
        }
        var failing: Set<AdEvent> = []
        for event in [AdEvent.impression, .click, .closed] where random.next() % 3 == 0 { failing.insert(event) }
        return Sequence(
            path: path, priceA: prices[Int(random.next() % 5)], priceB: prices[Int(random.next() % 5)], steps: steps,
            failing: failing, held: random.next() % 2 == 0)
    }

    /// Runs one sequence; returns the differences from the model (empty when they agree).
    static func run(_ s: Sequence) async throws -> [String] {
        let clock = ManualAdClock()
        let gate = s.held ? Gate() : nil
        let a = ModelNetwork(id: "A", price: s.priceA, failing: s.failing, gate: gate)
        let b = ModelNetwork(id: "B", price: s.priceB, failing: s.failing, gate: gate)
        let model = expected(s)
        var problems: [String] = []
        guard let ad = try await load(s, a: a, b: b, clock: clock) else { return ["no fill"] }
        if ad.networkID != model.winner { problems.append("winner \(ad.networkID), expected \(model.winner)") }
        let scriptEnded = LockedValue(false)
        _ = try await ad.presentFullScreen(
            on: ScriptedPresenter { controls in
                await controls.renderBegan()
                for step in s.steps {
                    switch step {
                    case .tap: await controls.tapped()
                    case .advance(let ms): await clock.advance(by: .milliseconds(ms))
                    }
                }
                _ = await controls.closeTapped()
                // Every tap and the close returned while the deliveries were held: none waited on them.
                scriptEnded.withLock { $0 = true }
                gate?.open()
            }, clock: clock)
        if !scriptEnded.withLock({ $0 }) { problems.append("the script did not run to its end") }
        let networks = ["A": a, "B": b]
        for (name, network) in networks {
            let settled = network.settled
            if settled != model.settlements[name] {
                problems.append("\(name) settled \(settled), expected \(model.settlements[name] ?? [])")
            }
        }
        let winner = networks[model.winner] ?? a
        let loser = model.winner == "A" ? b : a
        let got = winner.records.map { record in
            (record.event, Int((record.occurredAt ?? AdInstant(nanoseconds: -1)).nanoseconds / 1_000_000))
        }
        if got.map(\.0) != model.events.map(\.0) || got.map(\.1) != model.events.map(\.1) {
            problems.append("records \(got), expected \(model.events)")
        }
        for record in winner.records {
            if record.ad !== ad { problems.append("a record for another ad than the one shown") }
            if record.occurrence != 1 { problems.append("\(record.event) occurrence \(record.occurrence)") }
            if record.age < .zero || (record.occurredAt ?? .zero) + record.age > clock.now {
                problems.append("\(record.event) age \(record.age) outside the presentation")
            }
        }
        if !loser.records.isEmpty { problems.append("the losing network received \(loser.records.map(\.event))") }
        return problems
    }

    @Test func thePipeAgreesWithTheReferenceModelOnSeededRandomSequences() async throws {
        let runs = ProcessInfo.processInfo.environment["MODEL_RUNS"].flatMap { Int($0) }.map { max(1, $0) } ?? 300
        var random = SplitMix64(seed: 0x42)
        var divergent = 0
        var paths: [AdPath: Int] = [:]
        for index in 0..<runs {
            let sequence = Self.generate(&random)
            paths[sequence.path, default: 0] += 1
            let problems = try await Self.run(sequence)
            if !problems.isEmpty {
                divergent += 1
                if divergent <= 3 { Issue.record("sequence \(index) \(sequence): \(problems)") }
            }
        }
        let drawn = paths.map { "\($0.key) \($0.value)" }.sorted().joined(separator: ", ")
        print("one-pipe model: \(runs) sequences (\(drawn)), \(divergent) divergent")
        #expect(divergent == 0)
        #expect(paths.count == 3, "every path was drawn")
    }
}

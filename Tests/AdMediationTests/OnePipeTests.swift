import AdMediationTesting
import TestSupport
import Testing

@testable import AdMediation

/// How an ad reaches the app: the network's own load, through a ``Mediator``, or through a mediator that is itself the
/// one line of another.
enum AdPath: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case bare, mediated, nested
    var testDescription: String { rawValue }
}

/// A network whose reporter records every ``AdEventRecord`` it is given, after the gate opens (a slow events
/// endpoint), and every settlement.
final class RecordingNetwork: AdNetwork {
    let id: String
    let capabilities = AdNetworkCapabilities(formats: AdFormat.Kind.everyTested, reportsPrice: true)
    let gate = Gate()
    let ecpm: Double?
    private let state = LockedValue<(records: [AdEventRecord], settled: [AuctionResult], serial: Int)>(([], [], 0))

    init(id: String, ecpm: Double? = nil) {
        self.id = id
        self.ecpm = ecpm
    }

    var records: [AdEventRecord] { state.withLock { $0.records } }
    var settlements: [AuctionResult] { state.withLock { $0.settled } }

    func load(_ request: AdRequest) async throws -> AdLoadResult {
        let serial = state.withLock {
            $0.serial += 1
            return $0.serial
        }
        return .filled(
            LoadedAd(
                networkID: id, placement: request.placement, format: request.format,
                creative: AdCreative(id: "\(id)-\(serial)", kind: "image"), ecpm: ecpm, loadedAt: .zero,
                reporter: Reporter(network: self)))
    }

    private struct Reporter: AdEventReporter {
        let network: RecordingNetwork
        func deliver(_ record: AdEventRecord) async throws -> AdEventDelivery {
            await network.gate.wait()
            network.state.withLock { $0.records.append(record) }
            return .queued
        }
        func settle(_ result: AuctionResult, for ad: LoadedAd) {
            network.state.withLock { $0.settled.append(result) }
        }
    }
}

/// The answer of `task` if it comes within `limit` (real time: a bound far above what the scenario needs, which only
/// a caller held by a load it should not wait for would exceed); nil otherwise.
func answer<T: Sendable>(of task: Task<T, Never>, within limit: Duration = .seconds(20)) async -> T? {
    let box = LockedValue<T?>(nil)
    let watcher = Task {
        let value = await task.value
        box.withLock { $0 = value }
    }
    let deadline = ContinuousClock.now + limit
    while box.withLock({ $0 == nil }) && ContinuousClock.now < deadline { await Task.pollPause() }
    watcher.cancel()
    return box.withLock { $0 }
}

/// The mediators of a path: none (bare), one, or an outer one whose only line is an inner one.
struct PathMediators {
    let outer: Mediator?
    let inner: Mediator?

    init(_ path: AdPath, network: any AdNetwork, clock: ManualAdClock, frequencyCap: Int? = nil) throws {
        switch path {
        case .bare:
            (outer, inner) = (nil, nil)
        case .mediated:
            outer = try Mediator(
                id: "outer", networks: [network],
                configuration: .init(placements: [
                    "p": placement([.init(network: network.id, placement: "n1")], frequencyCap: frequencyCap)
                ]), clock: clock)
            inner = nil
        case .nested:
            let inner = try Mediator(
                id: "inner", networks: [network],
                configuration: .init(placements: [
                    "ip": placement([.init(network: network.id, placement: "n1")], frequencyCap: frequencyCap)
                ]), clock: clock)
            outer = try Mediator(
                id: "outer", networks: [inner],
                configuration: .init(placements: [
                    "p": placement([.init(network: "inner", placement: "ip")], frequencyCap: frequencyCap)
                ]), clock: clock)
            self.inner = inner
        }
    }

    /// One ad by this path; nil for no fill.
    func load(from network: any AdNetwork) async throws -> LoadedAd? {
        guard let outer else { return try await network.load(AdRequest(placement: "n1", format: .interstitial)).ad }
        return try await outer.load(interstitial).ad
    }
}

@Suite("One ad, one event record, one pipe: bare, mediated and nested", .timeLimit(.minutes(2)))
struct OnePipeTests {
    /// Issue 42: a mediated ad lost the time of its events (the age reached only a reporter with the age-taking
    /// overload). A click delivered 10 s after its tap reaches the network stamped with the tap's moment, whoever
    /// chose the ad.
    @Test(arguments: AdPath.allCases)
    func aLateDeliveredEventCarriesItsSignalsMomentOnEveryPath(path: AdPath) async throws {
        let clock = ManualAdClock()
        let network = RecordingNetwork(id: "net")
        let mediators = try PathMediators(path, network: network, clock: clock)
        let ad = try #require(try await mediators.load(from: network))
        _ = try await ad.presentFullScreen(
            on: ScriptedPresenter { controls in
                await controls.renderBegan()
                await controls.tapped()
                await clock.advance(by: .seconds(10))
                _ = await controls.closeTapped()
                network.gate.open()
            }, clock: clock)
        let records = network.records
        #expect(records.map(\.event) == [.impression, .click, .closed])
        let click = try #require(records.first { $0.event == .click })
        #expect(click.age == .seconds(10), "the click happened 10 s before it was delivered")
        #expect(click.occurredAt == .zero, "stamped with the tap's instant on the presentation's clock")
        #expect(click.ad === ad, "the network's own ad, not a wrapper")
    }

    /// The record names what the outermost decider chose: the mediated placement and the winning line.
    @Test(arguments: [AdPath.mediated, .nested])
    func theRecordCarriesTheOutermostMediationFacts(path: AdPath) async throws {
        let network = RecordingNetwork(id: "net", ecpm: 2.5)
        network.gate.open()
        let mediators = try PathMediators(path, network: network, clock: ManualAdClock())
        let ad = try #require(try await mediators.load(from: network))
        try await ad.report(.impression)
        let record = try #require(network.records.first)
        #expect(record.mediation?.mediatorID == "outer")
        #expect(record.mediation?.placement == "p")
        #expect(record.mediation?.line.network == (path == .nested ? "inner" : "net"))
        #expect(ad.placement == "p" && ad.networkPlacement == "n1" && ad.ecpm == 2.5)
    }

    /// An impression of a mediated ad counts for the cap of every mediator it passed through, once.
    @Test(arguments: [AdPath.mediated, .nested])
    func anImpressionCountsTowardTheCapOfEveryMediatorOnThePath(path: AdPath) async throws {
        let network = RecordingNetwork(id: "net")
        network.gate.open()
        let mediators = try PathMediators(path, network: network, clock: ManualAdClock(), frequencyCap: 1)
        let first = try #require(try await mediators.load(from: network))
        try await first.report(.impression)
        #expect(mediators.outer?.pacedImpressionCount(of: "p") == 1)
        if let inner = mediators.inner { #expect(inner.pacedImpressionCount(of: "ip") == 1) }
        #expect(try await mediators.load(from: network) == nil, "capped at one impression")
    }

    /// Issue 42: a nested mediator told its bidder `won` when it finished, then the outer auction picked a higher bid.
    /// The inner bidder is told it lost (102, at the outer winner's price) and never that it won.
    @Test func aNestedBidderThatLosesTheOuterAuctionIsToldItLostAndNeverThatItWon() async throws {
        let clock = ManualAdClock()
        let innerBidder = RecordingNetwork(id: "ib", ecpm: 3.0)
        let outerBidder = RecordingNetwork(id: "ob", ecpm: 5.0)
        let (outer, _) = try Self.nestedAuction(innerBidder: innerBidder, outerBidder: outerBidder, clock: clock)
        let ad = try #require(try await outer.load(interstitial).ad)
        #expect(ad.networkID == "ob")
        #expect(innerBidder.settlements == [.lost(reason: .lostToHigherBid, winningPrice: 5.0)])
        #expect(outerBidder.settlements == [.won(clearingPrice: 5.0)])
    }

    /// The mirror case: the nested bidder wins the outer decision, and is told so once, at its price.
    @Test func aNestedBidderThatWinsTheOuterAuctionIsToldOnceAtItsPrice() async throws {
        let clock = ManualAdClock()
        let innerBidder = RecordingNetwork(id: "ib", ecpm: 3.0)
        let outerBidder = RecordingNetwork(id: "ob", ecpm: 2.0)
        let (outer, _) = try Self.nestedAuction(innerBidder: innerBidder, outerBidder: outerBidder, clock: clock)
        let ad = try #require(try await outer.load(interstitial).ad)
        #expect(ad.networkID == "ib")
        #expect(innerBidder.settlements == [.won(clearingPrice: 3.0)])
        #expect(outerBidder.settlements == [.lost(reason: .lostToHigherBid, winningPrice: 3.0)])
    }

    /// Only a mediator running as a line leaves its winner to the outer decision: a mediator an adapter runs inside its
    /// own load (a wrapper that returns an ad of its own) decides and settles for itself.
    @Test func aMediatorRunByAnAdapterInsideALineSettlesItsOwnAuction() async throws {
        let clock = ManualAdClock()
        let bidder = RecordingNetwork(id: "ib", ecpm: 3.0)
        let inner = try Mediator(
            id: "inner", networks: [bidder],
            configuration: .init(placements: [
                "ip": PlacementConfiguration(
                    format: .interstitial, lines: [], bidders: [BidderLine(network: "ib", placement: "ib-tag")])
            ]), clock: clock)
        let wrapper = WrappingNetwork(id: "wrapper", inner: inner)
        let outer = try Mediator(
            id: "outer", networks: [wrapper],
            configuration: .init(placements: ["p": placement([.init(network: "wrapper", placement: "ip")])]),
            clock: clock)
        _ = try #require(try await outer.load(interstitial).ad)
        #expect(bidder.settlements == [.won(clearingPrice: 3.0)], "the inner auction is the inner mediator's to settle")
    }

    /// An inner mediator (one bidder) as a line of an outer one (one bidder); the line is priced so that it is asked.
    static func nestedAuction(
        innerBidder: RecordingNetwork, outerBidder: RecordingNetwork, clock: ManualAdClock
    ) throws -> (Mediator, Mediator) {
        let inner = try Mediator(
            id: "inner", networks: [innerBidder],
            configuration: .init(placements: [
                "ip": PlacementConfiguration(
                    format: .interstitial, lines: [], bidders: [BidderLine(network: "ib", placement: "ib-tag")])
            ]), clock: clock)
        let outer = try Mediator(
            id: "outer", networks: [inner, outerBidder],
            configuration: .init(placements: [
                "p": PlacementConfiguration(
                    format: .interstitial, lines: [WaterfallLine(network: "inner", placement: "ip", ecpm: 100)],
                    bidders: [BidderLine(network: "ob", placement: "ob-tag")])
            ]), clock: clock)
        return (outer, inner)
    }

    /// Issue 42: the caller waited for the slowest cancelled adapter. A line that ignores cancellation no longer holds
    /// the answer once a line above it filled; it finishes in the background, and its late fill is invalidated.
    @Test(arguments: [AdPath.mediated, .nested])
    func theCallerGetsTheAnswerAtTheDecisionWhileACancelledLoadIgnoresCancellation(path: AdPath) async throws {
        let clock = ManualAdClock()
        let fast = ScriptedAdNetwork(id: "fast", clock: clock, script: ["f": [.fill(ecpm: 1.0)]])
        let hung = GateNetwork(id: "hung")  // ignores cancellation: answers only when the test says
        let holder: Mediator
        let outer: Mediator
        if path == .mediated {
            holder = try Mediator(
                networks: [fast, hung],
                configuration: .init(placements: [
                    "p": placement([.init(network: "hung", placement: "h"), .init(network: "fast", placement: "f")])
                ]), clock: clock)
            outer = holder
        } else {
            holder = try Mediator(
                id: "inner", networks: [hung],
                configuration: .init(placements: ["ip": placement([.init(network: "hung", placement: "h")])]),
                clock: clock)
            outer = try Mediator(
                networks: [holder, fast],
                configuration: .init(placements: [
                    "p": placement([.init(network: "inner", placement: "ip"), .init(network: "fast", placement: "f")])
                ]), clock: clock)
        }
        // The hung line is above the fast one, so the fast fill must wait for it… until the deadline decides.
        let task = Task { await outer.loadWithTrace(interstitial) }
        await hung.waitForLoads()
        await clock.waitForSleepers(path == .nested ? 2 : 1)
        await clock.advance(by: .seconds(5))
        let outcome = try #require(await answer(of: task), "the caller was held by a load that ignores cancellation")
        #expect(try outcome.result.get().ad?.networkID == "fast")
        #expect(hung.cancellations == 1)
        #expect(holder.backgroundLoadCount == 1, "the hung load is owned in the background, not by the caller")
        let late = hung.fill("late")
        hung.answer(.success(.filled(late)))
        await holder.shutdown()
        #expect(late.isInvalidated && late.auctionResult == .lost(reason: .internalError, winningPrice: nil))
        #expect(holder.backgroundLoadCount == 0)
    }

    /// The same at the request's own deadline with nothing else filling: the caller gets its timeout at the deadline.
    @Test func theCallerGetsItsTimeoutAtTheDeadlineWhileTheTimedOutLoadIgnoresCancellation() async throws {
        let clock = ManualAdClock()
        let hung = GateNetwork(id: "hung")
        let mediator = try Mediator(
            networks: [hung],
            configuration: .init(placements: [
                "p": placement([.init(network: "hung", placement: "h")], deadline: .milliseconds(300))
            ]), clock: clock)
        let task = Task { await mediator.loadWithTrace(interstitial) }
        await hung.waitForLoads()
        await clock.waitForSleepers(1)
        await clock.advance(by: .milliseconds(300))
        let outcome = try #require(await answer(of: task), "the caller was held by a load that ignores cancellation")
        #expect(throws: AdError.self) { try outcome.result.get() }
        #expect(outcome.trace.duration == .milliseconds(300))
        hung.answer(.success(.noFill(NoFill(reason: "late"))))
        await mediator.shutdown()
        #expect(mediator.backgroundLoadCount == 0)
    }

    /// OpenRTB prices are exact decimals: a second price is the next bid plus one cent in decimal (2.35 → 2.36, not
    /// 2.3600000000000003), never rounded, never below the floor (0.930768 stays 0.930768), never above the bid.
    @Test func aSecondPriceIsAnExactDecimalNeverBelowTheFloorNorAboveTheBid() {
        #expect(DecisionEngine.clearingPrice(of: 5, second: 2.35, auction: .secondPrice, floor: nil) == 2.36)
        #expect(DecisionEngine.clearingPrice(of: 5, second: 0.5, auction: .secondPrice, floor: 0.930768) == 0.930768)
        #expect(DecisionEngine.clearingPrice(of: 5, second: 1.16346, auction: .secondPrice, floor: nil) == 1.17346)
        #expect(DecisionEngine.clearingPrice(of: 2.355, second: 2.35, auction: .secondPrice, floor: nil) == 2.355)
        #expect(DecisionEngine.clearingPrice(of: 1.16346, second: nil, auction: .firstPrice, floor: nil) == 1.16346)
    }
}

/// An adapter that runs a mediator inside its own load and returns an ad of its own with the winner's creative.
final class WrappingNetwork: AdNetwork {
    let id: String
    let capabilities = AdNetworkCapabilities(formats: AdFormat.Kind.everyTested, reportsPrice: true)
    let inner: Mediator

    init(id: String, inner: Mediator) {
        self.id = id
        self.inner = inner
    }

    func load(_ request: AdRequest) async throws -> AdLoadResult {
        // In a task of its own, as a wrapper SDK would: task-local values still flow into it.
        let result = try await Task { try await self.inner.load(request) }.value
        guard let ad = result.ad else { return result }
        return .filled(
            LoadedAd(
                networkID: id, placement: request.placement, format: ad.format, creative: ad.creative, ecpm: ad.ecpm,
                loadedAt: ad.loadedAt))
    }
}

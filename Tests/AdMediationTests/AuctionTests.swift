import AdMediationTesting
import AdNetworkConformance
import Foundation
import MetricsTestKit
import Testing

@testable import AdMediation

/// The unified auction (`specs/openrtb-bidder.md`, "Unified auction"): bids collected in parallel, the best valid bid
/// against the waterfall lines by price, clearing and notices. Scripted bidders answer at once on a clock nobody
/// advances, so no test depends on the machine's speed.
@Suite("Unified auction", .timeLimit(.minutes(1)))
struct AuctionTests {
    static func bidder(_ id: String, _ steps: [ScriptedAdNetwork.Step], clock: ManualAdClock) -> ScriptedAdNetwork {
        ScriptedAdNetwork(id: id, clock: clock, script: ["\(id)-tag": steps])
    }

    static func mediator(
        _ networks: [any AdNetwork], bidders: [BidderLine], lines: [WaterfallLine] = [],
        auction: AuctionType = .firstPrice,
        clock: ManualAdClock
    ) throws -> Mediator {
        try Mediator(
            networks: networks,
            configuration: .init(placements: [
                "p": PlacementConfiguration(format: .interstitial, lines: lines, bidders: bidders, auction: auction)
            ]), clock: clock)
    }

    static func line(_ network: String, _ index: Int) -> BidderLine {
        BidderLine(network: network, placement: "\(network)-tag")
    }

    @Test func theHighestBidWinsAtItsOwnPriceInAFirstPriceAuction() async throws {
        let clock = ManualAdClock()
        let a = Self.bidder("a", [.fill(ecpm: 2.0)], clock: clock),
            b = Self.bidder("b", [.fill(ecpm: 3.5)], clock: clock)
        let mediator = try Self.mediator([a, b], bidders: [Self.line("a", 0), Self.line("b", 1)], clock: clock)
        let outcome = await mediator.loadWithTrace(interstitial)
        let ad = try #require(try outcome.result.get().ad)
        #expect(ad.networkID == "b" && ad.ecpm == 3.5 && ad.pricePrecision == .exact)
        #expect(ad.winningLine?.isBid == true && ad.winningLine?.index == 1)
        #expect(outcome.trace.winningBid == 1)
        #expect(
            outcome.trace.bids.map(\.auction) == [
                .lost(reason: .lostToHigherBid, winningPrice: 3.5), .won(clearingPrice: 3.5),
            ])
        #expect(b.auctionResults.map(\.result) == [.won(clearingPrice: 3.5)])
        #expect(a.auctionResults.map(\.result) == [.lost(reason: .lostToHigherBid, winningPrice: 3.5)])
    }

    @Test func theWinnerPaysTheSecondPricePlusOneCentInASecondPriceAuction() async throws {
        let clock = ManualAdClock()
        let a = Self.bidder("a", [.fill(ecpm: 2.0)], clock: clock),
            b = Self.bidder("b", [.fill(ecpm: 3.5)], clock: clock)
        let mediator = try Self.mediator(
            [a, b], bidders: [Self.line("a", 0), Self.line("b", 1)], auction: .secondPrice, clock: clock)
        let ad = try #require(try await mediator.loadWithTrace(interstitial).result.get().ad)
        #expect(ad.ecpm == 2.01)
        #expect(b.auctionResults.map(\.result) == [.won(clearingPrice: 2.01)])
        #expect(a.auctionResults.map(\.result) == [.lost(reason: .lostToHigherBid, winningPrice: 2.01)])
    }

    @Test func aSecondPriceNeverFallsUnderTheWinnersFloorNorRisesAboveItsBid() async throws {
        let clock = ManualAdClock()
        let a = Self.bidder("a", [.fill(ecpm: 2.0)], clock: clock),
            b = Self.bidder("b", [.fill(ecpm: 3.5)], clock: clock)
        var floored = Self.line("b", 1)
        floored.floorEcpm = 3.0
        let mediator = try Self.mediator(
            [a, b], bidders: [Self.line("a", 0), floored], auction: .secondPrice, clock: clock)
        #expect(try await mediator.loadWithTrace(interstitial).result.get().ad?.ecpm == 3.0)
        let alone = Self.bidder("c", [.fill(ecpm: 1.5)], clock: clock)
        var high = Self.line("c", 0)
        high.floorEcpm = 1.0
        let single = try Self.mediator([alone], bidders: [high], auction: .secondPrice, clock: clock)
        #expect(try await single.loadWithTrace(interstitial).result.get().ad?.ecpm == 1.0, "no second bid: the floor")
    }

    @Test func aBidUnderItsFloorLosesWithReason100AndIsNeverDelivered() async throws {
        let clock = ManualAdClock()
        let a = Self.bidder("a", [.fill(ecpm: 0.8)], clock: clock)
        var floored = Self.line("a", 0)
        floored.floorEcpm = 1.0
        let mediator = try Self.mediator([a], bidders: [floored], clock: clock)
        let outcome = await mediator.loadWithTrace(interstitial)
        #expect(try outcome.result.get().ad == nil)
        #expect(outcome.trace.bids[0].outcome == .skipped(.belowFloor) && outcome.trace.bids[0].price == 0.8)
        #expect(a.auctionResults.map(\.result) == [.lost(reason: .belowFloor, winningPrice: nil)])
        #expect(a.requests.first?.floorEcpm == 1.0, "the floor travels with the request")
    }

    @Test func anExpiredBidLosesWithReason2AndIsNeverDelivered() async throws {
        let clock = ManualAdClock()
        let a = Self.bidder("a", [.fill(ecpm: 4.0, ttl: .zero)], clock: clock)
        let mediator = try Self.mediator([a], bidders: [Self.line("a", 0)], clock: clock)
        let outcome = await mediator.loadWithTrace(interstitial)
        #expect(try outcome.result.get().ad == nil)
        #expect(outcome.trace.bids[0].outcome == .skipped(.expired))
        #expect(a.auctionResults.map(\.result) == [.lost(reason: .expired, winningPrice: nil)])
    }

    @Test func aLinePricedAboveTheBestBidIsAskedAndWinsWhenItFills() async throws {
        let clock = ManualAdClock()
        let bidder = Self.bidder("rtb", [.fill(ecpm: 3.0)], clock: clock)
        let lines = ScriptedAdNetwork(
            id: "w", clock: clock, script: ["high": [.fill(ecpm: 5.0)], "low": [.fill(ecpm: 1.0)]])
        let mediator = try Self.mediator(
            [bidder, lines], bidders: [Self.line("rtb", 0)],
            lines: [
                .init(network: "w", placement: "high", floorEcpm: 4.5),
                .init(network: "w", placement: "low", floorEcpm: 1.0),
            ], clock: clock)
        let outcome = await mediator.loadWithTrace(interstitial)
        let ad = try #require(try outcome.result.get().ad)
        #expect(ad.networkID == "w" && ad.ecpm == 5.0 && ad.winningLine?.isBid == false && ad.winningLine?.index == 0)
        #expect(outcome.trace.lines.map(\.outcome) == [.fill, .skipped(.outbid)], "the 1.0 line cannot beat a 3.0 bid")
        #expect(lines.requests.map(\.placement) == ["high"])
        #expect(bidder.auctionResults.map(\.result) == [.lost(reason: .lostToHigherBid, winningPrice: 5.0)])
    }

    @Test func theBidWinsWhenNoLinePricedAboveItFills() async throws {
        let clock = ManualAdClock()
        let bidder = Self.bidder("rtb", [.fill(ecpm: 3.0)], clock: clock)
        let lines = ScriptedAdNetwork(id: "w", clock: clock, script: ["high": [.noFill()]])
        let mediator = try Self.mediator(
            [bidder, lines], bidders: [Self.line("rtb", 0)],
            lines: [.init(network: "w", placement: "high", floorEcpm: 4.5)], clock: clock)
        let outcome = await mediator.loadWithTrace(interstitial)
        #expect(try outcome.result.get().ad?.networkID == "rtb")
        #expect(outcome.trace.lines.map(\.outcome.name) == ["no_fill"])
        #expect(bidder.auctionResults.map(\.result) == [.won(clearingPrice: 3.0)])
    }

    @Test func aBidderThatDoesNotAnswerInTimeTimesOutAndTheWaterfallStillRuns() async throws {
        let clock = ManualAdClock()
        let slow = ScriptedAdNetwork(id: "slow", clock: clock, fallback: .hang)
        let lines = ScriptedAdNetwork(id: "w", clock: clock, script: ["l": [.fill(ecpm: 1.0)]])
        let mediator = try Self.mediator(
            [slow, lines], bidders: [BidderLine(network: "slow", placement: "s", timeout: .milliseconds(300))],
            lines: [.init(network: "w", placement: "l", timeout: .milliseconds(10_000))], clock: clock)
        let task = Task { await mediator.loadWithTrace(interstitial) }
        await clock.waitForSleepers(2)  // the bidder's own timeout and the auction's timer
        await clock.advance(by: .milliseconds(300))
        let outcome = await task.value
        #expect(try outcome.result.get().ad?.networkID == "w")
        #expect(outcome.trace.bids[0].outcome == .timeout)
        #expect(slow.requests.first?.timeout == .milliseconds(300), "the bidder's tmax comes from its timeout")
    }

    @Test func everyBidIsSettledLostWhenTheCallerCancels() async throws {
        let clock = ManualAdClock()
        let a = Self.bidder("a", [.fill(ecpm: 2.0)], clock: clock)
        let hang = ScriptedAdNetwork(id: "hang", clock: clock, fallback: .hang)
        let mediator = try Self.mediator(
            [a, hang], bidders: [Self.line("a", 0), BidderLine(network: "hang", placement: "h")], clock: clock)
        let task = Task { await mediator.loadWithTrace(interstitial) }
        await clock.waitForSleepers(2)
        // The bid is in hand before the caller gives up (the sleepers alone do not say that "a" has answered).
        await until { a.loadCount == 1 && a.requestsInFlight == 0 }
        task.cancel()
        let outcome = await task.value
        if case .failure(let error) = outcome.result {
            #expect(error.code == .cancelled)
        } else {
            Issue.record("expected a cancellation")
        }
        #expect(a.auctionResults.map(\.result) == [.lost(reason: .internalError, winningPrice: nil)])
        #expect(outcome.trace.bids.map(\.outcome) == [.fill, .skipped(.cancelled)], "the hanging bidder was abandoned")
    }

    @Test func everyBidIsCountedByOutcomeAndAuctionResult() async throws {
        let clock = ManualAdClock()
        let a = Self.bidder("a", [.fill(ecpm: 2.0)], clock: clock),
            b = Self.bidder("b", [.fill(ecpm: 3.5)], clock: clock)
        let metrics = TestMetrics()
        let mediator = try Mediator(
            networks: [a, b],
            configuration: .init(placements: [
                "p": PlacementConfiguration(
                    format: .interstitial, lines: [], bidders: [Self.line("a", 0), Self.line("b", 1)])
            ]), clock: clock, metrics: metrics)
        _ = await mediator.loadWithTrace(interstitial)
        let won = [("placement", "p"), ("network", "b"), ("outcome", "fill"), ("auction", "won")]
        let lost = [("placement", "p"), ("network", "a"), ("outcome", "fill"), ("auction", "lost_102")]
        #expect(try metrics.expectCounter("admediation_bid_outcomes_total", won).totalValue == 1)
        #expect(try metrics.expectCounter("admediation_bid_outcomes_total", lost).totalValue == 1)
    }

    @Test func aBidArrivingAfterTheBiddersTimeIsSettledLostAndInvalidated() async throws {
        let clock = ManualAdClock()
        let gate = GateNetwork(id: "g")  // ignores cancellation: answers whenever the test says
        let lines = ScriptedAdNetwork(id: "w", clock: clock, script: ["l": [.fill(ecpm: 1.0)]])
        let mediator = try Self.mediator(
            [gate, lines], bidders: [BidderLine(network: "g", placement: "b", timeout: .milliseconds(300))],
            lines: [.init(network: "w", placement: "l", timeout: .milliseconds(10_000))], clock: clock)
        let task = Task { await mediator.loadWithTrace(interstitial) }
        await gate.waitForLoads()
        await clock.waitForSleepers(1)  // the bidding's timer
        await clock.advance(by: .milliseconds(300))
        await until { gate.cancellations == 1 }
        let late = gate.fill("late", ecpm: 9.0)
        gate.answer(.success(.filled(late)))
        let outcome = await task.value
        await mediator.shutdown()  // the late answer is read in the background: wait for it
        #expect(try outcome.result.get().ad?.networkID == "w")
        #expect(outcome.trace.bids[0].outcome == .timeout)
        #expect(late.auctionResult == .lost(reason: .internalError, winningPrice: nil) && late.isInvalidated)
    }

    @Test func aBidderWhoseBreakerIsOpenIsNotAskedAndIsTracedAsSkipped() async throws {
        let clock = ManualAdClock()
        let down = AdError(.server(status: 503), "down")
        let bidder = Self.bidder("b", [.fail(down), .fail(down), .fill(ecpm: 2.0)], clock: clock)
        let lines = ScriptedAdNetwork(id: "w", clock: clock, script: ["l": [.fill(ecpm: 1.0)]])
        let mediator = try Mediator(
            networks: [bidder, lines],
            configuration: .init(
                placements: [
                    "p": PlacementConfiguration(
                        format: .interstitial, lines: [.init(network: "w", placement: "l")],
                        bidders: [Self.line("b", 0)])
                ],
                circuitBreaker: .init(failureThreshold: 2, coolDown: .seconds(30))), clock: clock)
        _ = await mediator.loadWithTrace(interstitial)
        _ = await mediator.loadWithTrace(interstitial)
        let rested = await mediator.loadWithTrace(interstitial)
        #expect(rested.trace.bids[0].outcome == .skipped(.breakerOpen))
        #expect(bidder.loadCount == 2)
        #expect(try rested.result.get().ad?.networkID == "w")
    }
}

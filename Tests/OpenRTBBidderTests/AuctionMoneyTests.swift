import AdMediation
import AdMediationTesting
import CurlTransport
import Foundation
import OpenRTBBidder
import Testing

/// Issue 42's money details: the auction type a bidder is told comes from the placement that clears it, the bid id
/// macro is the response's, and the billing notice never holds an impression.
@Suite("OpenRTB: auction type, bid id and billing through the mediator", .timeLimit(.minutes(2)))
struct AuctionMoneyTests {
    /// A placement that clears second price with a bidder at `rtb`, optionally nested as the only line of an outer
    /// first-price placement.
    static func mediator(_ network: BiddingNetwork, nested: Bool) throws -> Mediator {
        let placement = PlacementConfiguration(
            format: .banner(.standard), lines: [], bidders: [BidderLine(network: network.id, placement: "main_banner")],
            auction: .secondPrice)
        let inner = try Mediator(
            id: "inner", networks: [network], configuration: .init(placements: ["ip": placement]))
        guard nested else { return inner }
        return try Mediator(
            id: "outer", networks: [inner],
            configuration: .init(placements: [
                "ip": PlacementConfiguration(
                    format: .banner(.standard), lines: [WaterfallLine(network: "inner", placement: "ip")])
            ]))
    }

    /// Issue 42: a placement configured `second_price` whose bidder network is left at its default announced `at: 1`
    /// ("you pay your bid") and then charged a second price. The bidder now hears the placement's rule, through a
    /// mediator and through a nested one.
    @Test(arguments: [false, true])
    func aSecondPricePlacementAnnouncesAt2ToABidderLeftAtItsDefault(nested: Bool) async throws {
        let bidder = try ScriptedBidder { _, _ in (204, "") }
        let (network, curl) = BiddingNetworkTests.network(bidder)
        let mediator = try Self.mediator(network, nested: nested)
        _ = await mediator.loadWithTrace(mediator.request(for: "ip"))
        await WireContractTests.stop(network, curl, bidder)
        #expect(bidder.auctionBodies.map { $0["at"] as? Int } == [2])
    }

    /// A bidder configured to announce a rule the placement contradicts is a configuration error naming the setting,
    /// never a request that announces one rule and is charged by another.
    @Test func aBidderConfiguredAgainstThePlacementsAuctionIsAConfigurationErrorNamingTheSetting() async throws {
        let bidder = try ScriptedBidder { _, _ in (204, "") }
        let (network, curl) = BiddingNetworkTests.network(bidder) { $0.auction = .firstPrice }
        let mediator = try Self.mediator(network, nested: false)
        let outcome = await mediator.loadWithTrace(mediator.request(for: "ip"))
        await WireContractTests.stop(network, curl, bidder)
        #expect(bidder.auctionBodies.isEmpty, "nothing was asked under the wrong rule")
        guard case .error(let error) = try #require(outcome.trace.bids.first).outcome else {
            Issue.record("the bid should have failed: \(outcome.trace.bids)")
            return
        }
        #expect(error.code == .configuration)
        #expect(error.message.contains("auction is first_price") && error.message.contains("second_price"))
    }

    /// OpenRTB 2.6 §4.4: `${AUCTION_BID_ID}` is "ID of the bid; from BidResponse.bidid" — the response's id, the
    /// bid's own `id` only when the response has none.
    @Test(arguments: [("resp-77", "resp-77"), (nil, "b1")] as [(String?, String)])
    func theBidIDMacroIsTheResponsesBidID(bidid: String?, expected: String) async throws {
        let bidder = try ScriptedBidder { request, base in
            var answer = ScriptedBidder.bid(request, base, ["nurl": "\(base)/win?b=${AUCTION_BID_ID}"])
            if let bidid { answer = answer.replacingOccurrences(of: #""cur""#, with: #""bidid":"\#(bidid)","cur""#) }
            return (200, answer)
        }
        let (network, curl) = BiddingNetworkTests.network(bidder)
        let ad = try #require(try await network.load(banner).ad)
        #expect(ad.settleAuction(.won(clearingPrice: 2.5)))
        await WireContractTests.stop(network, curl, bidder)
        #expect(bidder.notices("/win") == ["/win?b=\(expected)"])
    }

    /// Issue 42: the billing notice was sent outside the bounded notice sender, with a 10 s timeout, so a silent
    /// billing endpoint held the impression and then reported it failed. It is now queued like every notice.
    @Test func anImpressionIsQueuedNotHeldByASilentBillingEndpoint() async throws {
        let silent = try LoopbackHTTPServer { _ in .silent }
        let bidder = try ScriptedBidder { request, base in
            (200, ScriptedBidder.bid(request, base, ["burl": "\(silent.baseURL)/bill"]))
        }
        let (network, curl) = BiddingNetworkTests.network(bidder) { $0.noticeShutdownGrace = .milliseconds(50) }
        let ad = try #require(try await network.load(banner).ad)
        #expect(try await ad.deliver(.impression) == .queued)
        #expect(ad.reportedEvents.contains(.impression))
        await WireContractTests.stop(network, curl, bidder)
        silent.stop()
    }
}

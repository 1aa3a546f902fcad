import AdMediation
import AdNetworkConformance
import CurlTransport
import DemandSandbox
import Foundation
import OpenRTBBidder
import OpenRTBSandbox
import TestSupport
import Testing

/// Issue 44 (Low): "A losing bidder's `lurl` receives the winner's exact price (standard OpenRTB, but it discloses
/// another partner's price): offer a per-placement setting to send only the loss reason." Two sandbox bidders over
/// loopback, `low` (1.50) and `high` (3.25): `low` loses, and its loss notice as the sandbox received it is read —
/// bare (the app settles the bid lost at 3.25), through a Mediator, and through a Mediator that is the line of another
/// (the setting on the outer placement).
@Suite("Loss notices: the losing bidder's price", .timeLimit(.minutes(2)))
struct LossNoticePriceTests {
    /// The loss notice `low` received on `path` with the placement (bare: the request) set to `content`.
    func lossNotice(_ path: ConformancePath, _ content: LossNoticeContent) async throws -> BidNoticeRecord? {
        let scenario = SandboxScenario(networks: [
            "low": NetworkScenario(ecpm: .fixed(1.5)), "high": NetworkScenario(ecpm: .fixed(3.25)),
        ])
        return try await DemandSandbox.withSandbox(scenario: scenario) { sandbox in
            let curl = CurlHTTPClient()
            func bidder(_ name: String) -> BiddingNetwork {
                var configuration = BiddingNetwork.Configuration(baseURL: sandbox.bidderBaseURL(name))
                configuration.id = name
                configuration.defaultTimeout = HangGuard.request
                configuration.noticeTimeout = HangGuard.request
                configuration.noticeDeadline = HangGuard.request
                configuration.noticeShutdownGrace = HangGuard.request
                return BiddingNetwork(configuration: configuration, http: curl)
            }
            let low = bidder("low"), high = bidder("high")
            var placement = PlacementConfiguration(
                format: .banner(.standard), lines: [], deadline: HangGuard.request,
                bidders: [
                    BidderLine(network: "low", placement: "home_banner", timeout: HangGuard.request),
                    BidderLine(network: "high", placement: "home_banner", timeout: HangGuard.request),
                ])
            switch path {
            case .bare:
                var request = AdRequest(placement: "home_banner", format: .banner(.standard))
                request.lossNotices = content
                let ad = try #require(try await low.load(request).ad)
                #expect(ad.settleAuction(.lost(reason: .lostToHigherBid, winningPrice: 3.25)))
            case .mediated, .nested:
                let mediator: Mediator
                if path == .mediated {
                    placement.lossNotices = content
                    mediator = try Mediator(
                        networks: [low, high], configuration: .init(placements: ["home": placement]))
                } else {
                    let inner = try Mediator(
                        id: "inner", networks: [low, high], configuration: .init(placements: ["home": placement]))
                    var outer = PlacementConfiguration(
                        format: .banner(.standard),
                        lines: [WaterfallLine(network: "inner", placement: "home", timeout: HangGuard.request)],
                        deadline: HangGuard.request)
                    outer.lossNotices = content
                    mediator = try Mediator(
                        id: "outer", networks: [inner], configuration: .init(placements: ["home": outer]))
                }
                let outcome = await mediator.loadWithTrace(AdRequest(placement: "home", format: .banner(.standard)))
                let ad = try #require(try outcome.result.get().ad)
                #expect(ad.networkID == "high")
            }
            // Shutting down drains the notice queues (within their 2 s grace).
            await low.shutdown()
            await high.shutdown()
            await curl.shutdown()
            let notices = sandbox.routes(OpenRTBRoutes.self)?.records.bidNotices ?? []
            return notices.first { $0.bidder == "low" && $0.kind == .loss }
        }
    }

    @Test(arguments: ConformancePath.allCases)
    func aLosingBiddersLossNoticeCarriesOnlyTheReasonWhenThePlacementSaysReasonOnly(path: ConformancePath)
        async throws
    {
        let notice = try #require(try await lossNotice(path, .reasonOnly))
        #expect(notice.reason == "102")
        #expect((notice.price ?? "").isEmpty, "price \(notice.price ?? "") in the loss notice")
    }

    /// Seats that lose inside one answer are told by the bidder itself when it reads the answer (and the fill's seat's
    /// runner-up with the win notice): under `reasonOnly` neither hears the price.
    @Test func theSeatsThatLoseInsideOneAnswerHearOnlyTheReasonUnderReasonOnly() async throws {
        let bidder = try ScriptedBidder { request, base in
            let bid = { (bidID: String, price: Double) -> [String: Any] in
                [
                    "id": bidID, "impid": "1", "price": price, "adm": "<a/>",
                    "lurl": "\(base)/loss?b=\(bidID)&p=${AUCTION_PRICE}&m=${AUCTION_MIN_TO_WIN}&r=${AUCTION_LOSS}",
                ]
            }
            let answer: [String: Any] = [
                "id": request["id"] as? String ?? "",
                "seatbid": [
                    ["seat": "x", "bid": [bid("low", 1.0), bid("top", 3.0)]], ["seat": "y", "bid": [bid("mid", 2.0)]],
                ],
            ]
            return (
                200, String(decoding: (try? JSONSerialization.data(withJSONObject: answer)) ?? Data(), as: UTF8.self)
            )
        }
        let (network, curl) = BiddingNetworkTests.network(bidder)
        var request = banner
        request.lossNotices = .reasonOnly
        let ad = try #require(try await network.load(request).ad)
        #expect(ad.settleAuction(.won(clearingPrice: 3.0)))
        await network.shutdown()
        await curl.shutdown()
        bidder.server.stop()
        #expect(Set(bidder.notices("/loss")) == ["/loss?b=low&p=&m=&r=102", "/loss?b=mid&p=&m=&r=102"])
    }

    @Test(arguments: ConformancePath.allCases)
    func aLosingBiddersLossNoticeCarriesTheWinningPriceByDefault(path: ConformancePath) async throws {
        let notice = try #require(try await lossNotice(path, .reasonAndPrice))
        #expect(notice.reason == "102" && notice.price == "3.25")
    }
}

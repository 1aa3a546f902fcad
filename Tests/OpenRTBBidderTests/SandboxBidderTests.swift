import AdMediation
import AdMediationTesting
import AdNetworkConformance
import CurlTransport
import DemandSandbox
import Foundation
import OpenRTBBidder
import OpenRTBSandbox
import TestSupport
import Testing

@Suite("OpenRTB bidder over the sandbox", .timeLimit(.minutes(2)))
struct SandboxBidderTests {
    @Test func theBidderPassesTheConformanceKitAndTheBidderScenarios() async throws {
        let scenario = SandboxScenario(
            networks: [
                "rtb-kit": NetworkScenario(fillRate: 1, ecpm: .uniform(min: 0.5, max: 4))
            ],
            placements: [
                "rtb-kit/nobid": NetworkScenario(fillRate: 0),
                "rtb-kit/broken": NetworkScenario(faults: [Fault(.status, status: 400)]),
                "rtb-kit/slow": NetworkScenario(latencyMs: .fixed(1500)),
            ])
        try await DemandSandbox.withSandbox(scenario: scenario) { sandbox in
            let curl = CurlHTTPClient()
            let http = RecordingHTTPClient(wrapping: curl)
            let clock = ManualAdClock()
            var configuration = BiddingNetwork.Configuration(baseURL: sandbox.bidderBaseURL("rtb-kit"))
            configuration.id = "rtb-kit"
            // Requests to a live sandbox: hang guards (the kit sets its own timeouts where time is the rule).
            configuration.defaultTimeout = HangGuard.request
            configuration.noticeTimeout = HangGuard.request
            let network = BiddingNetwork(configuration: configuration, http: http, clock: clock)
            // The kit's timing rules need a real clock.
            let kitNetwork = BiddingNetwork(configuration: configuration, http: http)
            let subject = ConformanceSubject(
                network: kitNetwork, wire: http,
                fillRequest: AdRequest(placement: "main_banner", format: .banner(.standard)),
                noFillRequest: AdRequest(placement: "nobid", format: .banner(.standard)),
                failingRequest: (AdRequest(placement: "broken", format: .banner(.standard)), .badRequest),
                slowRequest: AdRequest(placement: "slow", format: .banner(.standard)))
            for result in await AdNetworkConformance.runAll(subject) where result.status != .passed {
                Issue.record("\(result.scenario): \(result.status)")
            }
            let bidder = BidderSubject(
                network: network, wire: http,
                bidRequest: AdRequest(
                    placement: "main_banner", format: .banner(.standard), timeout: .seconds(10)),  // the kit's deadline
                clock: clock, floor: 2)
            let bidderResults = await BidderConformance.runAll(bidder)
            for result in bidderResults where result.status != .passed {
                Issue.record("\(result.scenario): \(result.status)")
            }
            // Bare, through a Mediator and through a nested one.
            #expect(bidderResults.count == BidderConformance.resultCount)
            #expect(bidderResults.contains { $0.scenario == "noticesAreSentOnce (nested)" })
            await network.shutdown()
            await kitNetwork.shutdown()
            await curl.shutdown()
        }
    }

    /// Two sandbox bidders and a waterfall line: the mediator's auction picks the highest price, the winner's win and
    /// billing notices and the loser's loss notice (reason 102, the clearing price) reach the bidders once each.
    @Test func aMediatedAuctionSendsEveryNoticeOnceWithTheRightReason() async throws {
        let scenario = SandboxScenario(networks: [
            "low": NetworkScenario(ecpm: .fixed(1.5)), "high": NetworkScenario(ecpm: .fixed(3.25)),
        ])
        try await DemandSandbox.withSandbox(scenario: scenario) { sandbox in
            let curl = CurlHTTPClient()
            func bidder(_ name: String) -> BiddingNetwork {
                var configuration = BiddingNetwork.Configuration(baseURL: sandbox.bidderBaseURL(name))
                configuration.id = name
                configuration.auction = .secondPrice  // as the placement clears
                configuration.noticeTimeout = HangGuard.request
                configuration.noticeDeadline = HangGuard.request
                configuration.noticeShutdownGrace = HangGuard.request
                return BiddingNetwork(configuration: configuration, http: curl)
            }
            let low = bidder("low"), high = bidder("high")
            let mediator = try Mediator(
                networks: [low, high],
                configuration: .init(placements: [
                    "home": PlacementConfiguration(
                        format: .banner(BannerSize(width: 320, height: 50)), lines: [], deadline: HangGuard.request,
                        bidders: [
                            BidderLine(network: "low", placement: "home_banner", timeout: HangGuard.request),
                            BidderLine(network: "high", placement: "home_banner", timeout: HangGuard.request),
                        ], auction: .secondPrice)
                ]))
            let outcome = await mediator.loadWithTrace(AdRequest(placement: "home", format: .banner(.standard)))
            let ad = try #require(try outcome.result.get().ad)
            #expect(ad.networkID == "high" && ad.ecpm == 1.51)
            try await ad.report(.impression)
            await low.shutdown()
            await high.shutdown()
            let records = sandbox.routes(OpenRTBRoutes.self)?.records ?? OpenRTBRoutes.Records()
            #expect(records.bidRequests.count == 2 && records.bidRequests.allSatisfy { $0.contains(#""at":2"#) })
            let notices = records.bidNotices
            let bidID = { (name: String) in notices.first { $0.bidder == name }?.bidID ?? "" }
            #expect(
                notices.filter { $0.bidder == "high" }.map(\.kind).sorted { $0.rawValue < $1.rawValue } == [
                    .bill, .win,
                ])
            #expect(
                notices.filter { $0.bidder == "high" }.allSatisfy { $0.price == "1.51" && $0.bidID == bidID("high") })
            #expect(
                notices.filter { $0.bidder == "low" }.map { "\($0.kind.rawValue) \($0.reason ?? "") \($0.price ?? "")" }
                    == ["loss 102 1.51"])
            await curl.shutdown()
        }
    }

    @Test func aDriftingScenarioChangesPricesAfterTheGivenRequestCount() async throws {
        let scenario = SandboxScenario(networks: [
            "drift": NetworkScenario(ecpm: .fixed(1), drift: [DriftPhase(afterRequests: 3, ecpm: .fixed(4))])
        ])
        try await DemandSandbox.withSandbox(scenario: scenario) { sandbox in
            let curl = CurlHTTPClient()
            var configuration = BiddingNetwork.Configuration(baseURL: sandbox.bidderBaseURL("drift"))
            configuration.defaultTimeout = HangGuard.request
            let network = BiddingNetwork(configuration: configuration, http: curl)
            var prices: [Double] = []
            for _ in 0..<5 {
                let ad = try await network.load(AdRequest(placement: "p", format: .interstitial)).ad
                prices.append(ad?.ecpm ?? -1)
                ad?.invalidate()
            }
            #expect(prices == [1, 1, 1, 4, 4])
            await network.shutdown()
            await curl.shutdown()
        }
    }
}

import AdMediation
import AdMediationTesting
import AdapterKit
import CurlTransport
import Foundation
import OpenRTBBidder
import TestSupport
import Testing

/// Issue 29, items 12–16: `mtype`, `at`, exact prices, every standard macro, the 2.6 privacy fields. Each test talks to
/// a loopback bidder over real HTTP; notices are awaited through ``BiddingNetwork/shutdown()`` (which sends what is
/// queued), never by sleeping.
@Suite("OpenRTB 2.6 wire contract", .timeLimit(.minutes(2)))
struct WireContractTests {
    /// The 14 standard macros of OpenRTB 2.6 §4.4, each as a query item named after it.
    static let everyMacro = [
        "AUCTION_ID", "AUCTION_BID_ID", "AUCTION_IMP_ID", "AUCTION_SEAT_ID", "AUCTION_AD_ID", "AUCTION_PRICE",
        "AUCTION_CURRENCY", "AUCTION_MBR", "AUCTION_LOSS", "AUCTION_MIN_TO_WIN", "AUCTION_MULTIPLIER",
        "AUCTION_IMP_TS", "AUCTION_DISCOUNT_PCT", "AUCTION_DISCOUNT_CPM",
    ]

    /// `?AUCTION_ID=${AUCTION_ID}&…` for the 14 macros.
    static let everyMacroQuery = "?" + everyMacro.map { "\($0)=${\($0)}" }.joined(separator: "&")

    /// The query items of a request target, by name (values as sent, not decoded).
    static func query(_ target: String) -> [String: String] {
        let query = target.split(separator: "?", maxSplits: 1).dropFirst().first ?? ""
        var items: [String: String] = [:]
        for pair in query.split(separator: "&", omittingEmptySubsequences: false) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            items[String(parts[0])] = parts.count > 1 ? String(parts[1]) : ""
        }
        return items
    }

    /// A bid answer whose single bid has the exact JSON price text `price` (JSONSerialization would reformat it).
    static func answer(_ request: [String: Any], _ base: String, price: String, _ bid: [String: Any] = [:]) -> String {
        ScriptedBidder.bid(request, base, bid.merging(["price": 7777.25]) { $1 })
            .replacingOccurrences(of: "7777.25", with: price)
    }

    static func stop(_ network: BiddingNetwork, _ curl: CurlHTTPClient, _ bidder: ScriptedBidder) async {
        await network.shutdown()
        await curl.shutdown()
        bidder.server.stop()
    }

    // MARK: - Item 12: mtype

    /// 2.6 §3.2.4 `mtype`: "Type of the creative markup so that it can properly be associated with the right
    /// sub-object of the BidRequest.Imp" — a native bid (4) never fills a banner slot, and its loss notice says 204.
    @Test func aBidWhoseMarkupTypeTheImpressionDidNotOfferIsDiscardedWithReason204() async throws {
        let bidder = try ScriptedBidder { request, base in (200, ScriptedBidder.bid(request, base, ["mtype": 4])) }
        let (network, curl) = BiddingNetworkTests.network(bidder)
        let result = try await network.load(banner)
        await Self.stop(network, curl, bidder)
        guard case .noFill(let noFill) = result else {
            Issue.record("a native bid filled a banner slot: \(result)")
            return
        }
        #expect(noFill.reason.contains("mtype 4 (native) is not a format the impression offered (banner)"))
        #expect(bidder.notices("/loss").map { Self.query($0)["r"] } == ["204"])
    }

    /// Spec: "its `mtype` (1 banner, 2 video, 3 audio, 4 native) is not a format the `imp` offered … One bad bid never
    /// discards the other bids of the same answer." A native bid at 1.20 must not beat a banner bid at 0.50; being the
    /// seat's losing bid, it carries the seat's loss notice once the banner bid wins.
    @Test func aNativeBidNeverBeatsAValidBannerBidOfTheSameAnswer() async throws {
        let bidder = try ScriptedBidder { request, base in
            let bid = { (id: String, price: Double, mtype: Int) -> [String: Any] in
                [
                    "id": id, "impid": "1", "price": price, "adm": "<\(id)/>", "mtype": mtype,
                    "lurl": "\(base)/loss?b=\(id)&r=${AUCTION_LOSS}",
                ]
            }
            let answer: [String: Any] = [
                "id": request["id"] as? String ?? "",
                "seatbid": [["seat": "s", "bid": [bid("native", 1.20, 4), bid("banner", 0.50, 1)]]],
            ]
            return (
                200, String(decoding: (try? JSONSerialization.data(withJSONObject: answer)) ?? Data(), as: UTF8.self)
            )
        }
        let (network, curl) = BiddingNetworkTests.network(bidder)
        let ad = try await network.load(banner).ad
        #expect(ad?.settleAuction(.won(clearingPrice: 0.5)) == true)
        await Self.stop(network, curl, bidder)
        #expect(ad?.ecpm == 0.5 && ad?.creative.markup == "<banner/>")
        #expect(bidder.notices("/loss") == ["/loss?b=native&r=204"])
    }

    /// Spec: "One bad bid never discards the other bids of the same answer" — a bid whose `mtype` is not even a number
    /// is filtered by format on its own, and the answer's valid bid still fills (and wins: the seat's loss notice
    /// goes).
    @Test func aBidWithAnUnreadableMarkupTypeIsDiscardedAloneNotTheWholeAnswer() async throws {
        let bidder = try ScriptedBidder { request, base in
            let id = request["id"] as? String ?? ""
            let body = """
                {"id":"\(id)","seatbid":[{"seat":"s","bid":[
                {"id":"odd","impid":"1","price":3,"adm":"<odd/>","mtype":"banner",
                "lurl":"\(base)/loss?r=${AUCTION_LOSS}"},
                {"id":"good","impid":"1","price":1,"adm":"<good/>","mtype":1}]}]}
                """
            return (200, body)
        }
        let (network, curl) = BiddingNetworkTests.network(bidder)
        let ad = try await network.load(banner).ad
        #expect(ad?.settleAuction(.won(clearingPrice: 1)) == true)
        await Self.stop(network, curl, bidder)
        #expect(ad?.creative.markup == "<good/>")
        #expect(bidder.notices("/loss") == ["/loss?r=204"])
    }

    /// 2.6 §3.2.4: a rewarded request offers `video` only, so a banner creative (`mtype` 1) is filtered by format.
    @Test func aBannerBidForAVideoImpressionIsDiscarded() async throws {
        let bidder = try ScriptedBidder { request, base in (200, ScriptedBidder.bid(request, base, ["mtype": 1])) }
        let (network, curl) = BiddingNetworkTests.network(bidder)
        let result = try await network.load(AdRequest(placement: "r", format: .rewarded, timeout: HangGuard.request))
        await Self.stop(network, curl, bidder)
        #expect(result.ad == nil)
        #expect(bidder.notices("/loss").map { Self.query($0)["r"] } == ["204"])
    }

    /// 2.6 §3.2.4: a video creative (`mtype` 2) is what a rewarded request's `video` impression offered.
    @Test func aVideoBidForAVideoImpressionFills() async throws {
        let bidder = try ScriptedBidder { request, base in (200, ScriptedBidder.bid(request, base, ["mtype": 2])) }
        let (network, curl) = BiddingNetworkTests.network(bidder)
        let ad = try await network.load(AdRequest(placement: "r", format: .rewarded, timeout: HangGuard.request)).ad
        await Self.stop(network, curl, bidder)
        #expect(ad?.ecpm == 2.5)
        #expect(bidder.notices("/loss").isEmpty)
    }

    // MARK: - Item 13: at

    /// Spec: "`at` is always sent: `1` (first price, the default here) or `2` (second price). Absent, the standard
    /// means 2."
    @Test func aFirstPricePlacementAnnouncesAt1() async throws {
        let bidder = try ScriptedBidder { _, _ in (204, "") }
        let (network, curl) = BiddingNetworkTests.network(bidder)
        _ = try await network.load(banner)
        await Self.stop(network, curl, bidder)
        #expect(bidder.auctionBodies.map { $0["at"] as? Int } == [1])
    }

    /// Spec: "`at` is always sent: … `2` (second price)" — for a placement configured to clear second price.
    @Test func aSecondPricePlacementAnnouncesAt2() async throws {
        let bidder = try ScriptedBidder { _, _ in (204, "") }
        let (network, curl) = BiddingNetworkTests.network(bidder) { $0.placementAuctions["main_banner"] = .secondPrice }
        _ = try await network.load(banner)
        _ = try await network.load(
            AdRequest(placement: "other", format: .banner(.standard), timeout: HangGuard.request))
        await Self.stop(network, curl, bidder)
        #expect(bidder.auctionBodies.map { $0["at"] as? Int } == [2, 1])
    }

    /// Spec: "`at` is always sent" — a configuration file's `auction: second_price` reaches the wire as `at: 2`.
    @Test func theFactorysAuctionSettingAnnouncesSecondPrice() async throws {
        let bidder = try ScriptedBidder { _, _ in (204, "") }
        let curl = CurlHTTPClient()
        let settings = try JSONDecoder().decode(
            OpenRTBFactory.Settings.self, from: Data(#"{"auction": "second_price"}"#.utf8))
        let built = try OpenRTBFactory.make(
            NetworkConfiguration(id: "rtb", baseURL: bidder.server.baseURL, settings: settings),
            context: AdNetworkFactoryContext(http: curl))
        _ = try await built.network.load(banner)
        await built.backgroundWork?.shutdown()
        await curl.shutdown()
        bidder.server.stop()
        #expect(bidder.auctionBodies.map { $0["at"] as? Int } == [2])
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(OpenRTBFactory.Settings.self, from: Data(#"{"auction": "vickrey"}"#.utf8))
        }
    }

    // MARK: - Item 14: exact prices

    /// Spec: "Prices are exact decimals: the clearing price is never rounded above the bid (a 1.16346 bid clears at
    /// 1.16346 in first price, not 1.1635)."
    @Test func aFirstPriceWinIsNoticedAtTheBidsExactPrice() async throws {
        let bidder = try ScriptedBidder { request, base in (200, Self.answer(request, base, price: "1.16346")) }
        let (network, curl) = BiddingNetworkTests.network(bidder)
        let ad = try #require(try await network.load(banner).ad)
        #expect(ad.settleAuction(.won(clearingPrice: try #require(ad.ecpm))))
        #expect(try await ad.report(.impression))
        await Self.stop(network, curl, bidder)
        #expect(bidder.notices("/win") == ["/win?p=1.16346"])
        #expect(bidder.notices("/bill") == ["/bill?p=1.16346"])
    }

    /// Spec: "the clearing price is never rounded above the bid": a bid written with more digits than a `Double`
    /// holds (0.29999999999999999, whose nearest `Double` prints as 0.3) clears at its own text, not 0.3.
    @Test func aClearingPriceIsNeverNoticedAboveTheBidsText() async throws {
        let bidder = try ScriptedBidder { request, base in
            (200, Self.answer(request, base, price: "0.29999999999999999"))
        }
        let (network, curl) = BiddingNetworkTests.network(bidder)
        let ad = try #require(try await network.load(banner).ad)
        #expect(ad.settleAuction(.won(clearingPrice: try #require(ad.ecpm))))
        await Self.stop(network, curl, bidder)
        #expect(bidder.notices("/win") == ["/win?p=0.29999999999999999"])
    }

    /// Spec: "Prices are exact decimals" — a second-price clearing of 1.17346 is sent as 1.17346, not 1.1735.
    @Test func aSecondPriceClearingIsNoticedExactly() async throws {
        let bidder = try ScriptedBidder { request, base in (200, ScriptedBidder.bid(request, base)) }
        let (network, curl) = BiddingNetworkTests.network(bidder) { $0.auction = .secondPrice }
        let ad = try #require(try await network.load(banner).ad)
        #expect(ad.settleAuction(.won(clearingPrice: 1.17346)))
        await Self.stop(network, curl, bidder)
        #expect(bidder.notices("/win") == ["/win?p=1.17346"])
    }

    /// Spec: "`${AUCTION_PRICE}` is replaced by the clearing price" — the lower bids of an answer are told the winning
    /// bid's exact price (the same seat's: told when the winner's auction settles).
    @Test func theLowerBidsOfAnAnswerAreToldTheWinningPriceExactly() async throws {
        let bidder = try ScriptedBidder { request, base in
            let id = request["id"] as? String ?? ""
            let body = """
                {"id":"\(id)","seatbid":[{"seat":"s","bid":[
                {"id":"top","impid":"1","price":1.16346,"adm":"<a/>"},
                {"id":"low","impid":"1","price":1.1,"adm":"<a/>","lurl":"\(base)/loss?p=${AUCTION_PRICE}"}]}]}
                """
            return (200, body)
        }
        let (network, curl) = BiddingNetworkTests.network(bidder)
        let ad = try await network.load(banner).ad
        #expect(ad?.settleAuction(.won(clearingPrice: 1.16346)) == true)
        await Self.stop(network, curl, bidder)
        #expect(ad?.ecpm == 1.16346)
        #expect(bidder.notices("/loss") == ["/loss?p=1.16346"])
    }

    // MARK: - Item 15: every standard macro

    /// Spec: "Every standard macro of 2.6 §4.4 is substituted where known and replaced by an empty string where not
    /// … no literal `${…}` ever leaves the SDK." A win at 2 for a bid of 2.5: the market bid ratio is 0.8.
    @Test func everyStandardMacroOfAWinNoticeIsSubstitutedOrEmptied() async throws {
        let bidder = try ScriptedBidder { request, base in
            (200, ScriptedBidder.bid(request, base, ["adid": "ad-7", "nurl": "\(base)/win\(Self.everyMacroQuery)"]))
        }
        let (network, curl) = BiddingNetworkTests.network(bidder)
        let ad = try #require(try await network.load(banner).ad)
        #expect(ad.settleAuction(.won(clearingPrice: 2)))
        await Self.stop(network, curl, bidder)
        let notice = try #require(bidder.notices("/win").first)
        #expect(!notice.contains("${") && !notice.contains("%7B"), "\(notice)")
        let auctionID = try #require(bidder.auctionBodies.first?["id"] as? String)
        #expect(
            Self.query(notice) == [
                "AUCTION_ID": auctionID, "AUCTION_BID_ID": "b1", "AUCTION_IMP_ID": "1", "AUCTION_SEAT_ID": "s1",
                "AUCTION_AD_ID": "ad-7", "AUCTION_PRICE": "2", "AUCTION_CURRENCY": "USD", "AUCTION_MBR": "0.8",
                "AUCTION_LOSS": "", "AUCTION_MIN_TO_WIN": "", "AUCTION_MULTIPLIER": "", "AUCTION_IMP_TS": "",
                "AUCTION_DISCOUNT_PCT": "", "AUCTION_DISCOUNT_CPM": "",
            ])
    }

    /// 2.6 §4.4 `${AUCTION_IMP_TS}`: "Timestamp when the impression was fulfilled (e.g. when the ad is displayed) in
    /// Unix format (i.e., milliseconds since the epoch)" — known when the billing notice goes, on the first impression.
    @Test func theBillingNoticeCarriesTheImpressionTimestamp() async throws {
        let bidder = try ScriptedBidder { request, base in
            (200, ScriptedBidder.bid(request, base, ["burl": "\(base)/bill\(Self.everyMacroQuery)"]))
        }
        let (network, curl) = BiddingNetworkTests.network(bidder)
        let ad = try #require(try await network.load(banner).ad)
        let before = Int64(Date().timeIntervalSince1970 * 1000)
        #expect(try await ad.report(.impression))
        let after = Int64(Date().timeIntervalSince1970 * 1000)
        await Self.stop(network, curl, bidder)
        let notice = try #require(bidder.notices("/bill").first)
        #expect(!notice.contains("${") && !notice.contains("%7B"), "\(notice)")
        let stamp = try #require(Self.query(notice)["AUCTION_IMP_TS"].flatMap { Int64($0) })
        #expect((before...after + 1).contains(stamp))
        #expect(Self.query(notice)["AUCTION_PRICE"] == "2.5" && Self.query(notice)["AUCTION_MBR"] == "1")
    }

    /// 2.6 §4.4 `${AUCTION_MIN_TO_WIN}`: "Lowest bid price that would have won" — in a first-price auction lost to a
    /// bid of 3, a bid of 3.01; the values a loss does not know (ratio, timestamp, discounts) are empty.
    @Test func aLossNoticeCarriesTheMinimumToWinAndEmptiesTheUnknowns() async throws {
        let bidder = try ScriptedBidder { request, base in
            (200, ScriptedBidder.bid(request, base, ["lurl": "\(base)/loss\(Self.everyMacroQuery)"]))
        }
        let (network, curl) = BiddingNetworkTests.network(bidder)
        let ad = try #require(try await network.load(banner).ad)
        #expect(ad.settleAuction(.lost(reason: .lostToHigherBid, winningPrice: 3)))
        await Self.stop(network, curl, bidder)
        let notice = try #require(bidder.notices("/loss").first)
        #expect(!notice.contains("${") && !notice.contains("%7B"), "\(notice)")
        let values = Self.query(notice)
        #expect(
            values["AUCTION_LOSS"] == "102" && values["AUCTION_PRICE"] == "3" && values["AUCTION_MIN_TO_WIN"] == "3.01")
        #expect(
            ["AUCTION_MBR", "AUCTION_IMP_TS", "AUCTION_MULTIPLIER", "AUCTION_DISCOUNT_PCT", "AUCTION_DISCOUNT_CPM"]
                .allSatisfy { values[$0] == "" })
    }

    // MARK: - Item 16: privacy in the 2.6 fields

    /// Spec: "Privacy signals travel only in `regs`/`user`/`device` as above, in the 2.6 fields (`regs.gdpr`,
    /// `regs.us_privacy`, `regs.gpp`, `regs.gpp_sid`, `user.consent`)" — not in 2.5's `regs.ext`.
    @Test func privacyTravelsInThe26FieldsNotInRegsExt() async throws {
        let bidder = try ScriptedBidder { _, _ in (204, "") }
        let (network, curl) = BiddingNetworkTests.network(bidder)
        var request = banner
        request.privacy = PrivacySignals(
            gdprApplies: true, tcfConsent: "TCF1", usPrivacy: "1YNN", gpp: "GPP1", gppSectionIDs: [7])
        _ = try await network.load(request)
        await Self.stop(network, curl, bidder)
        let body = try #require(bidder.auctionBodies.first)
        let regs = try #require(body["regs"] as? [String: Any])
        #expect(regs["gdpr"] as? Int == 1 && regs["us_privacy"] as? String == "1YNN")
        #expect(regs["gpp"] as? String == "GPP1" && regs["gpp_sid"] as? [Int] == [7])
        #expect(regs["ext"] == nil, "2.5's regs.ext is not sent")
        #expect((body["user"] as? [String: Any])?["consent"] as? String == "TCF1")
    }
}

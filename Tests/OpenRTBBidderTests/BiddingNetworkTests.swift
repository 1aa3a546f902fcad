import AdMediation
import AdMediationTesting
import AdNetworkConformance
import CurlTransport
import DemandSandbox
import Foundation
import OpenRTBBidder
import TestSupport
import Testing

/// A loopback bidder that answers each auction with `answer(requestJSON)` and records every request.
final class ScriptedBidder: Sendable {
    let server: LoopbackHTTPServer
    private let seen = Seen()

    private final class Seen: Sendable {
        let requests = LockedValue<[LoopbackHTTPServer.Request]>([])
        let port = LockedValue(0)
    }

    init(_ answer: @escaping @Sendable (_ request: [String: Any], _ base: String) -> (status: Int, body: String)) throws
    {
        let seen = self.seen
        let started = try LoopbackHTTPServer { request in
            seen.requests.withLock { $0.append(request) }
            guard request.path.hasSuffix("/openrtb2/auction") else { return .respond(.init(status: 204, body: [])) }
            let json = (try? JSONSerialization.jsonObject(with: Data(request.body))) as? [String: Any] ?? [:]
            let (status, body) = answer(json, "http://127.0.0.1:\(seen.port.withLock { $0 })")
            return .respond(
                .init(status: status, headers: [("Content-Type", "application/json")], body: Array(body.utf8)))
        }
        seen.port.withLock { $0 = started.port }
        server = started
    }

    var requests: [LoopbackHTTPServer.Request] { seen.requests.withLock { $0 } }
    var auctionBodies: [[String: Any]] {
        requests.filter { $0.path.hasSuffix("/openrtb2/auction") }.compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.body))) as? [String: Any]
        }
    }
    func notices(_ path: String) -> [String] { requests.map(\.target).filter { $0.hasPrefix(path) } }

    /// A bid answer for `request` (its id, impid "1") with fields overridden by `bid`.
    static func bid(_ request: [String: Any], _ base: String, _ bid: [String: Any] = [:], id: String? = nil) -> String {
        var fields: [String: Any] = [
            "id": "b1", "impid": "1", "price": 2.5, "adm": "<div>ad</div>", "crid": "cr-1", "w": 320, "h": 50,
            "nurl": "\(base)/win?p=${AUCTION_PRICE}", "burl": "\(base)/bill?p=${AUCTION_PRICE}",
            "lurl": "\(base)/loss?r=${AUCTION_LOSS}&p=${AUCTION_PRICE}",
        ]
        for (key, value) in bid { fields[key] = value }
        let answer: [String: Any] = [
            "id": id ?? request["id"] as? String ?? "", "cur": "USD", "seatbid": [["seat": "s1", "bid": [fields]]],
        ]
        return String(
            decoding: (try? JSONSerialization.data(withJSONObject: answer, options: [.withoutEscapingSlashes]))
                ?? Data(), as: UTF8.self)
    }
}

/// The shared bid request: a loopback bidder answers in milliseconds, the timeout is a hang guard (a busy machine
/// must not turn a bid into a timeout).
let banner = AdRequest(placement: "main_banner", format: .banner(.standard), timeout: HangGuard.request)

@Suite("OpenRTB bidder", .timeLimit(.minutes(2)))
struct BiddingNetworkTests {
    static func network(
        _ bidder: ScriptedBidder, clock: any AdClock = SystemAdClock(),
        _ configure: (inout BiddingNetwork.Configuration) -> Void = { _ in }
    )
        -> (BiddingNetwork, CurlHTTPClient)
    {
        let curl = CurlHTTPClient()
        var configuration = BiddingNetwork.Configuration(baseURL: bidder.server.baseURL)
        // Notices to loopback servers: a hang guard for each attempt, not the 2 s default. On the real clock the
        // notice deadline and the shutdown grace (5 s, 2 s) become hang guards too; on a manual clock the test drives
        // them itself. A test about them sets its own.
        configuration.noticeTimeout = HangGuard.request
        if clock is SystemAdClock {
            configuration.noticeDeadline = HangGuard.request
            configuration.noticeShutdownGrace = HangGuard.request
        }
        configure(&configuration)
        return (BiddingNetwork(configuration: configuration, http: curl, clock: clock), curl)
    }

    @Test func theRequestCarriesTheImpressionFloorTmaxAndEveryPrivacySignal() async throws {
        let bidder = try ScriptedBidder { _, _ in (204, "") }
        let (network, curl) = Self.network(bidder) {
            $0.advertisingID = "ifa-1"
            $0.appBundle = "com.example.game"
        }
        var request = banner
        request.floorEcpm = 1.2
        // A valid TC string consenting purposes 1 and 2 (iabtcf-java's TCStringV2Test): under GDPR an invalid one
        // would strip the advertising id (the privacy rules).
        let tcf = "COwxsONOwxsONKpAAAENAdCAAMAAAAAAAAAAAAAAAAAA"
        // A valid GPP string with a US National section that opts out of nothing (an unreadable one fails closed).
        let gpp = "DBABLA~BVVqAAEABCA.QA"
        request.privacy = PrivacySignals(
            gdprApplies: true, tcfConsent: tcf, usPrivacy: "1YNN", gpp: gpp, gppSectionIDs: [7])
        _ = try await network.load(request)
        request.privacy.coppa = true
        _ = try await network.load(request)
        await network.shutdown()
        await curl.shutdown()
        bidder.server.stop()
        let bodies = bidder.auctionBodies
        try #require(bodies.count == 2)
        let header = bidder.requests.first?.header("x-openrtb-version")
        #expect(header == "2.6")
        let imp = try #require((bodies[0]["imp"] as? [[String: Any]])?.first)
        #expect(
            imp["tagid"] as? String == "main_banner" && imp["bidfloor"] as? Double == 1.2
                && imp["bidfloorcur"] as? String == "USD")
        #expect(
            (imp["banner"] as? [String: Any])?["w"] as? Int == 320
                && (imp["banner"] as? [String: Any])?["h"] as? Int == 50)
        let margin = BiddingNetwork.Configuration(baseURL: bidder.server.baseURL).tmaxMargin
        let tmax = try #require(banner.timeout.map { Int(($0 - margin).milliseconds) })
        #expect(bodies[0]["tmax"] as? Int == tmax, "the request's time left minus the tmax margin")
        #expect((bodies[0]["app"] as? [String: Any])?["bundle"] as? String == "com.example.game")
        let regs = try #require(bodies[0]["regs"] as? [String: Any])
        #expect(regs["gpp"] as? String == gpp && regs["gpp_sid"] as? [Int] == [7] && regs["coppa"] as? Int == 0)
        #expect(regs["gdpr"] as? Int == 1 && regs["us_privacy"] as? String == "1YNN")
        #expect((bodies[0]["user"] as? [String: Any])?["consent"] as? String == tcf)
        #expect(
            (bodies[0]["device"] as? [String: Any])?["ifa"] as? String == "ifa-1"
                && (bodies[0]["device"] as? [String: Any])?["lmt"] as? Int == 0)
        let limited = try #require(bodies[1]["device"] as? [String: Any])
        #expect(limited["lmt"] as? Int == 1 && limited["ifa"] == nil, "COPPA: no advertising id")
        #expect((bodies[1]["regs"] as? [String: Any])?["coppa"] as? Int == 1)
    }

    @Test func aRewardedRequestAsksForVideoMarkedRewardedAndFullScreen() async throws {
        let bidder = try ScriptedBidder { _, _ in (204, "") }
        let (network, curl) = Self.network(bidder)
        _ = try await network.load(AdRequest(placement: "r", format: .rewarded, timeout: .seconds(1)))
        await network.shutdown()
        await curl.shutdown()
        bidder.server.stop()
        let imp = try #require((bidder.auctionBodies.first?["imp"] as? [[String: Any]])?.first)
        #expect(imp["rwdd"] as? Int == 1 && imp["instl"] as? Int == 1 && imp["banner"] == nil)
        #expect((imp["video"] as? [String: Any])?["mimes"] as? [String] == ["video/mp4"])
    }

    @Test func aValidBidFillsWithItsPriceMarkupAndExpiry() async throws {
        let bidder = try ScriptedBidder { request, base in (200, ScriptedBidder.bid(request, base, ["exp": 120])) }
        let clock = ManualAdClock(start: .zero + .seconds(10))
        let (network, curl) = Self.network(bidder, clock: clock)
        let ad = try #require(try await network.load(banner).ad)
        await network.shutdown()
        await curl.shutdown()
        bidder.server.stop()
        #expect(
            ad.ecpm == 2.5 && ad.pricePrecision == .exact && ad.creative.markup == "<div>ad</div>"
                && ad.creative.id == "cr-1")
        #expect(ad.expiresAt == clock.now + .seconds(120))
    }

    @Test(
        arguments: [
            (["price": -1.0], "not a finite price", "3"),
            (["price": 0.5], "under the floor", "100"),
            (["impid": "9"], "not the requested impression", "3"),
            (["w": 300, "h": 250], "not the banner's 320x50", "3"),
            (["exp": 0], "has expired", "2"),
            (["adm": ""], "no markup", "3"),
        ] as [([String: any Sendable], String, String)])
    func aBidThatBreaksTheContractIsDiscardedWithItsLossReason(
        override: [String: any Sendable], why: String, reason: String
    ) async throws {
        let bidder = try ScriptedBidder { request, base in (200, ScriptedBidder.bid(request, base, override)) }
        let (network, curl) = Self.network(bidder)
        var request = banner
        request.floorEcpm = 1.0
        let result = try await network.load(request)
        await network.shutdown()
        await curl.shutdown()
        bidder.server.stop()
        guard case .noFill(let noFill) = result else {
            Issue.record("expected a no fill, got \(result)")
            return
        }
        #expect(noFill.reason.contains(why), "\(noFill.reason)")
        #expect(bidder.notices("/loss").map { $0.contains("r=\(reason)&") } == [true], "\(bidder.notices("/loss"))")
    }

    @Test func aResponseForAnotherAuctionIsDiscarded() async throws {
        let bidder = try ScriptedBidder { request, base in (200, ScriptedBidder.bid(request, base, id: "someone-else"))
        }
        let (network, curl) = Self.network(bidder)
        let result = try await network.load(banner)
        await network.shutdown()
        await curl.shutdown()
        bidder.server.stop()
        #expect(result.ad == nil)
        #expect(bidder.notices("/loss").count == 1)
    }

    /// Seat y's bid is told at once; seat x's lower bid when x's winning bid's auction settles.
    @Test func theHighestOfSeveralBidsFillsAndTheOthersGetLossNotices() async throws {
        let bidder = try ScriptedBidder { request, base in
            let id = request["id"] as? String ?? ""
            let bid = { (bidID: String, price: Double) -> [String: Any] in
                [
                    "id": bidID, "impid": "1", "price": price, "adm": "<a/>",
                    "lurl": "\(base)/loss?b=\(bidID)&p=${AUCTION_PRICE}&r=${AUCTION_LOSS}",
                ]
            }
            let answer: [String: Any] = [
                "id": id,
                "seatbid": [
                    ["seat": "x", "bid": [bid("low", 1.0), bid("top", 3.0)]], ["seat": "y", "bid": [bid("mid", 2.0)]],
                ],
            ]
            return (
                200, String(decoding: (try? JSONSerialization.data(withJSONObject: answer)) ?? Data(), as: UTF8.self)
            )
        }
        let (network, curl) = Self.network(bidder)
        let ad = try #require(try await network.load(banner).ad)
        #expect(ad.settleAuction(.won(clearingPrice: 3.0)))
        await network.shutdown()
        await curl.shutdown()
        bidder.server.stop()
        #expect(ad.ecpm == 3.0 && ad.creative.fields["seat"] == "x")
        #expect(Set(bidder.notices("/loss")) == ["/loss?b=low&p=3&r=102", "/loss?b=mid&p=3&r=102"])
    }

    @Test func winAndBillingNoticesGoOnceWithTheClearingPrice() async throws {
        let bidder = try ScriptedBidder { request, base in (200, ScriptedBidder.bid(request, base)) }
        let (network, curl) = Self.network(bidder)
        let ad = try #require(try await network.load(banner).ad)
        #expect(ad.settleAuction(.won(clearingPrice: 2.01)))
        #expect(
            !ad.settleAuction(.won(clearingPrice: 2.01))
                && !ad.settleAuction(.lost(reason: .lostToHigherBid, winningPrice: 3)))
        #expect(try await ad.report(.impression))
        #expect(try await !ad.report(.impression))
        await network.shutdown()
        await curl.shutdown()
        bidder.server.stop()
        #expect(bidder.notices("/win") == ["/win?p=2.01"])
        #expect(bidder.notices("/bill") == ["/bill?p=2.01"])
        #expect(bidder.notices("/loss").isEmpty)
    }

    @Test func anExpiredBidIsNeverShown() async throws {
        let bidder = try ScriptedBidder { request, base in (200, ScriptedBidder.bid(request, base, ["exp": 30])) }
        let clock = ManualAdClock()
        let (network, curl) = Self.network(bidder, clock: clock)
        let ad = try #require(try await network.load(banner).ad)
        await clock.advance(by: .seconds(30))
        await #expect(throws: AdError.self) { try await ad.report(.impression) }
        await network.shutdown()
        await curl.shutdown()
        bidder.server.stop()
        #expect(bidder.notices("/bill").isEmpty)
    }

    @Test func noBidAnswersAreNoFillsAndErrorsMapToTheTaxonomy() async throws {
        let statuses = LockedValue([204, 200, 400, 503])
        let bidder = try ScriptedBidder { request, _ in
            let status = statuses.withLock { $0.removeFirst() }
            return (status, status == 200 ? #"{"id":"\#(request["id"] as? String ?? "")","nbr":2}"# : "")
        }
        let (network, curl) = Self.network(bidder)
        #expect(try await network.load(banner).ad == nil)
        guard case .noFill(let noFill) = try await network.load(banner) else {
            Issue.record("nbr is a no fill")
            return
        }
        #expect(noFill.reason == "no bid (nbr 2)")
        do {
            _ = try await network.load(banner)
            Issue.record("400 must fail")
        } catch let error as AdError { #expect(error.code == .badRequest) }
        do {
            _ = try await network.load(banner)
            Issue.record("503 must fail")
        } catch let error as AdError { #expect(error.code == .server(status: 503)) }
        await network.shutdown()
        await curl.shutdown()
        bidder.server.stop()
    }

    @Test func tooLittleTimeLeftIsATimeoutWithoutARequest() async throws {
        let bidder = try ScriptedBidder { _, _ in (204, "") }
        let (network, curl) = Self.network(bidder)
        var request = banner
        request.timeout = .milliseconds(55)
        do {
            _ = try await network.load(request)
            Issue.record("expected a timeout")
        } catch let error as AdError { #expect(error.code == .timeout) }
        await network.shutdown()
        await curl.shutdown()
        bidder.server.stop()
        #expect(bidder.requests.isEmpty)
    }

    @Test func aWinNoticeAnsweredWith5xxIsRetriedWithBackoffUntilItGoesThrough() async throws {
        let answers = LockedValue([503, 502, 204])
        let notices = try LoopbackHTTPServer { _ in
            .respond(.init(status: answers.withLock { $0.isEmpty ? 204 : $0.removeFirst() }))
        }
        let bidder = try ScriptedBidder { request, _ in
            (200, ScriptedBidder.bid(request, notices.baseURL, ["burl": NSNull(), "lurl": NSNull()]))
        }
        let clock = ManualAdClock()
        let (network, curl) = Self.network(bidder, clock: clock)
        let ad = try #require(try await network.load(banner).ad)
        #expect(ad.settleAuction(.won(clearingPrice: 2.5)))
        await clock.waitForSleepers(1)  // the first attempt got 503: backing off 250 ms
        await clock.advance(by: .milliseconds(250))
        await clock.waitForSleepers(1)  // the second got 502: backing off 500 ms
        await clock.advance(by: .milliseconds(500))
        await network.shutdown()
        #expect(notices.requestsReceived == 3, "two 5xx answers, then the 204")
        #expect(network.pendingNotices == 0)
        await curl.shutdown()
        bidder.server.stop()
        notices.stop()
    }

    @Test func aNoticeSettledAfterShutdownIsCountedAsDroppedNotSent() async throws {
        let bidder = try ScriptedBidder { request, base in (200, ScriptedBidder.bid(request, base)) }
        let (network, curl) = Self.network(bidder)
        let ad = try #require(try await network.load(banner).ad)
        await network.shutdown()
        #expect(ad.settleAuction(.won(clearingPrice: 2.5)))
        #expect(network.droppedNotices == 1 && network.pendingNotices == 0)
        await curl.shutdown()
        bidder.server.stop()
        #expect(bidder.notices("/win").isEmpty)
    }
}

import AdMediation
import AdMediationTesting
import CurlTransport
import Foundation
import OpenRTBBidder
import Testing

/// Issue 31, item 2: notices as a bounded background service, and one bad bid discards only itself. Every test talks to
/// loopback servers over real HTTP; time that the sender waits on (backoffs, the shutdown grace) is a `ManualAdClock`.
@Suite("OpenRTB notices as a bounded service", .timeLimit(.minutes(1)))
struct NoticeBoundTests {
    /// A bid object as JSON text; `price` is written as it is (so `1e400` stays `1e400`).
    static func bid(_ id: String, price: String, lurl: String?, nurl: String? = nil) -> String {
        var text = #"{"id":"\#(id)","impid":"1","price":\#(price),"adm":"<\#(id)/>","w":320,"h":50"#
        if let lurl { text += #","lurl":"\#(lurl)""# }
        if let nurl { text += #","nurl":"\#(nurl)""# }
        return text + "}"
    }

    /// An answer to `request` with one `seatbid` per seat, each holding its bids' JSON texts.
    static func answer(_ request: [String: Any], seats: [(name: String, bids: [String])]) -> String {
        let seatbids = seats.map { #"{"seat":"\#($0.name)","bid":[\#($0.bids.joined(separator: ","))]}"# }
        return
            #"{"id":"\#(request["id"] as? String ?? "")","cur":"USD","seatbid":[\#(seatbids.joined(separator: ","))]}"#
    }

    static func network(
        _ bidder: ScriptedBidder, clock: ManualAdClock,
        _ configure: (inout BiddingNetwork.Configuration) -> Void = { _ in }
    ) -> (BiddingNetwork, CurlHTTPClient) {
        BiddingNetworkTests.network(bidder, clock: clock, configure)
    }

    /// A server that takes notices and never answers them (until stopped).
    static func blackHole() throws -> LoopbackHTTPServer {
        try LoopbackHTTPServer { _ in .respond(.init(status: 204, delay: .seconds(3600))) }
    }

    static let roomyBanner = AdRequest(placement: "main_banner", format: .banner(.standard), timeout: .seconds(20))

    // MARK: - At most one loss notice per seat

    /// The tester's flood (3 000 bids from 3 seats; 9 999 is now over the 1 MiB bound of one answer and refused
    /// whole: `BoundedAnswerTests`). Each seat gets one loss notice, carried by its best losing bid: the two other
    /// seats' best bids at once (102, the winning price), the winner's seat's runner-up when it wins.
    @Test func threeThousandBidsFromThreeSeatsSendThreeLossNotices() async throws {
        let bidder = try ScriptedBidder { request, base in
            let seats = ["a", "b", "c"].enumerated().map { seat, name in
                (
                    name: name,
                    bids: (0..<1000).map { index in
                        // Seat a bids highest; in each seat bid 0 is the best.
                        let cents = 100_000 - seat * 10_000 - index
                        let id = "\(name)\(index)"
                        return Self.bid(
                            id, price: String(format: "%d.%02d", cents / 100, cents % 100),
                            lurl: "\(base)/loss?b=\(id)&r=${AUCTION_LOSS}")
                    }
                )
            }
            return (200, Self.answer(request, seats: seats))
        }
        let clock = ManualAdClock()
        let (network, curl) = Self.network(bidder, clock: clock)
        let ad = try #require(try await network.load(Self.roomyBanner).ad)
        #expect(ad.creative.fields["seat"] == "a" && ad.ecpm == 1000)
        #expect(ad.settleAuction(.won(clearingPrice: 1000)))
        await network.shutdown()
        await curl.shutdown()
        bidder.server.stop()
        #expect(
            Set(bidder.notices("/loss")) == ["/loss?b=a1&r=102", "/loss?b=b0&r=102", "/loss?b=c0&r=102"],
            "\(bidder.notices("/loss").prefix(10)) … \(bidder.notices("/loss").count) in all")
        #expect(network.droppedNotices == 0)
    }

    /// When the fill loses the mediator's auction, its own loss notice is its seat's only one.
    @Test func whenTheFillLosesItsSeatGetsOnlyTheFillsLossNotice() async throws {
        let bidder = try ScriptedBidder { request, base in
            let bids = (0..<50).map { Self.bid("a\($0)", price: "\(90 - $0)", lurl: "\(base)/loss?b=a\($0)") }
            return (200, Self.answer(request, seats: [("a", bids)]))
        }
        let (network, curl) = Self.network(bidder, clock: ManualAdClock())
        let ad = try #require(try await network.load(Self.roomyBanner).ad)
        #expect(ad.settleAuction(.lost(reason: .lostToHigherBid, winningPrice: 100)))
        await network.shutdown()
        await curl.shutdown()
        bidder.server.stop()
        #expect(bidder.notices("/loss") == ["/loss?b=a0"])
    }

    /// Distinct seats cannot lift the bound: 2 000 seats of one bid each get at most `maxLossNoticesPerAnswer` (16)
    /// loss notices, the best-priced seats' first.
    @Test func twoThousandSeatsGetAtMostTheConfiguredNumberOfLossNotices() async throws {
        let bidder = try ScriptedBidder { request, base in
            let seats = (0..<2000).map { index in
                (
                    name: "s\(index)",
                    bids: [Self.bid("b\(index)", price: "\(3000 - index)", lurl: "\(base)/loss?b=\(index)")]
                )
            }
            return (200, Self.answer(request, seats: seats))
        }
        let (network, curl) = Self.network(bidder, clock: ManualAdClock())
        let ad = try #require(try await network.load(Self.roomyBanner).ad)
        #expect(ad.settleAuction(.won(clearingPrice: 3000)))
        await network.shutdown()
        await curl.shutdown()
        bidder.server.stop()
        #expect(Set(bidder.notices("/loss")) == Set((1...16).map { "/loss?b=\($0)" }))
    }

    // MARK: - Never holding the answer or the exit

    /// Notices stuck at a server that never answers neither delay the next load's answer nor hold ``shutdown()``
    /// beyond its grace (2 s on the network's clock), after which they are cancelled and counted as dropped. Proved by
    /// outcome, not wall time: the second answer arrives while all five notices (each with a 60 s timeout) are still
    /// pending, and the shutdown ends them as dropped — neither could be true had anything waited for them.
    @Test func noticesToANeverAnsweringServerHoldNeitherTheNextAnswerNorShutdownBeyondItsGrace() async throws {
        let sink = try Self.blackHole()
        let bidder = try ScriptedBidder { request, _ in
            let seats = ["a", "b", "c"].enumerated().map { seat, name in
                (
                    name,
                    (0..<2).map { Self.bid("\(name)\($0)", price: "\(9 - seat - $0)", lurl: "\(sink.baseURL)/loss") }
                )
            }
            return (200, Self.answer(request, seats: seats))
        }
        let clock = ManualAdClock()
        let (network, curl) = Self.network(bidder, clock: clock) { $0.noticeTimeout = .seconds(60) }
        let first = try #require(try await network.load(Self.roomyBanner).ad)
        #expect(first.settleAuction(.won(clearingPrice: 9)))  // the winner's seat's runner-up: a third loss notice
        let second = try await network.load(Self.roomyBanner).ad
        #expect(second != nil)
        #expect(network.pendingNotices == 5, "3 loss notices of the first answer, 2 of the second, all still stuck")
        let shutdown = Task { await network.shutdown() }
        await clock.waitForSleepers(1)  // the grace
        await clock.advance(by: .seconds(2))
        await shutdown.value
        #expect(network.pendingNotices == 0 && network.droppedNotices == 5, "cut at the grace, not sent or failed")
        await curl.shutdown()
        bidder.server.stop()
        sink.stop()
    }

    /// Shutdown does not wait out a notice's backoff either: a notice to a closed port, retrying on the network's
    /// clock, is cancelled when the grace passes.
    @Test func aNoticeBackingOffFromAClosedPortIsCancelledWhenTheGracePasses() async throws {
        let bidder = try ScriptedBidder { request, base in
            // Port 1 (tcpmux) is not served on loopback: the connection is refused at once.
            (
                200,
                ScriptedBidder.bid(
                    request, base, ["nurl": "http://127.0.0.1:1/win", "burl": NSNull(), "lurl": NSNull()])
            )
        }
        let clock = ManualAdClock()
        let (network, curl) = Self.network(bidder, clock: clock) {
            $0.noticeAttempts = 10
            $0.noticeShutdownGrace = .milliseconds(100)
        }
        let ad = try #require(try await network.load(banner).ad)
        #expect(ad.settleAuction(.won(clearingPrice: 2.5)))
        await clock.waitForSleepers(1)  // refused: backing off 250 ms
        let shutdown = Task { await network.shutdown() }
        await clock.waitForSleepers(2)  // and the grace of 100 ms
        await clock.advance(by: .milliseconds(100))
        await shutdown.value
        #expect(network.pendingNotices == 0 && network.droppedNotices == 1)
        await curl.shutdown()
        bidder.server.stop()
    }

    /// Retries cannot add up to minutes: however many attempts are allowed, none starts after the notice's deadline
    /// (1 s here: attempts at 0, 250 and 750 ms; the next would start at 1 750 ms).
    @Test func aNoticeIsRetriedOnlyWithinItsDeadline() async throws {
        let notices = try LoopbackHTTPServer { _ in .respond(.init(status: 503)) }
        let bidder = try ScriptedBidder { request, _ in
            (200, ScriptedBidder.bid(request, notices.baseURL, ["burl": NSNull(), "lurl": NSNull()]))
        }
        let clock = ManualAdClock()
        let (network, curl) = Self.network(bidder, clock: clock) {
            $0.noticeAttempts = 10
            $0.noticeDeadline = .seconds(1)
        }
        let ad = try #require(try await network.load(banner).ad)
        #expect(ad.settleAuction(.won(clearingPrice: 2.5)))
        await clock.waitForSleepers(1)
        await clock.advance(by: .milliseconds(250))
        await clock.waitForSleepers(1)
        await clock.advance(by: .milliseconds(500))
        await network.shutdown()  // drains at once: the third 503 was the last attempt within the deadline
        #expect(notices.requestsReceived == 3)
        #expect(network.failedNotices == 1 && network.pendingNotices == 0 && network.droppedNotices == 0)
        await curl.shutdown()
        bidder.server.stop()
        notices.stop()
    }

    // MARK: - A bounded queue

    /// With one notice in flight (to a server that never answers) and a queue of 4, 49 loss notices of one answer
    /// (50 seats, the most one answer is read for) keep at most 6 (one sent, one taken from the queue, four
    /// waiting); the others are dropped and counted.
    @Test func theQueueDropsAndCountsNoticesBeyondItsLimit() async throws {
        let sink = try Self.blackHole()
        let bidder = try ScriptedBidder { request, _ in
            let seats = (0..<50).map {
                (name: "s\($0)", bids: [Self.bid("b\($0)", price: "\(100 - $0)", lurl: "\(sink.baseURL)/l")])
            }
            return (200, Self.answer(request, seats: seats))
        }
        let clock = ManualAdClock()
        let (network, curl) = Self.network(bidder, clock: clock) {
            $0.noticeQueueLimit = 4
            $0.noticeConcurrency = 1
            $0.maxLossNoticesPerAnswer = 100
            $0.noticeTimeout = .seconds(60)
        }
        #expect(try await network.load(Self.roomyBanner).ad != nil)
        #expect((43...45).contains(network.droppedNotices), "\(network.droppedNotices)")
        #expect(network.pendingNotices + network.droppedNotices == 49)
        let shutdown = Task { await network.shutdown() }
        await clock.waitForSleepers(1)
        await clock.advance(by: .seconds(2))
        await shutdown.value
        #expect(network.droppedNotices == 49 && network.pendingNotices == 0)
        #expect(sink.requestsReceived <= 1)
        await curl.shutdown()
        bidder.server.stop()
        sink.stop()
    }

    // MARK: - One bad bid discards only itself

    /// A price no `Double` holds, a negative, a string, an object or null: that bid alone is discarded (its loss
    /// notice says 3, invalid bid response), and both the other seat's bid and its own seat's other bid stay usable.
    @Test(arguments: ["1e400", "-1e400", "-1", #""NaN""#, #""2.5""#, #"{"v":1}"#, "[3]", "null", "true"])
    func aBidWithAMalformedPriceIsDiscardedAlone(price: String) async throws {
        let bidder = try ScriptedBidder { request, base in
            let bad = [
                Self.bid("bad", price: price, lurl: "\(base)/loss?b=bad&r=${AUCTION_LOSS}"),
                Self.bid("same", price: "1.25", lurl: "\(base)/loss?b=same&r=${AUCTION_LOSS}"),
            ]
            let good = [Self.bid("other", price: "2.5", lurl: "\(base)/loss?b=other&r=${AUCTION_LOSS}")]
            return (200, Self.answer(request, seats: [("bad", bad), ("good", good)]))
        }
        let (network, curl) = Self.network(bidder, clock: ManualAdClock())
        let ad = try #require(try await network.load(Self.roomyBanner).ad)
        #expect(ad.settleAuction(.won(clearingPrice: 2.5)))
        await network.shutdown()
        await curl.shutdown()
        bidder.server.stop()
        #expect(ad.ecpm == 2.5 && ad.creative.markup == "<other/>")
        #expect(bidder.notices("/loss") == ["/loss?b=same&r=102"], "the seat's valid bid carries its notice")
    }

    /// With the other seat gone, the bad seat's valid bid still fills beside the `1e400` one.
    @Test func aBidPricedBeyondDoubleLeavesItsSeatsOtherBidToFill() async throws {
        let bidder = try ScriptedBidder { request, base in
            let bids = [
                Self.bid("bad", price: "1e400", lurl: "\(base)/loss?b=bad&r=${AUCTION_LOSS}"),
                Self.bid("good", price: "1.25", lurl: nil),
            ]
            return (200, Self.answer(request, seats: [("s", bids)]))
        }
        let (network, curl) = Self.network(bidder, clock: ManualAdClock())
        let ad = try #require(try await network.load(Self.roomyBanner).ad)
        #expect(ad.settleAuction(.won(clearingPrice: 1.25)))
        await network.shutdown()
        await curl.shutdown()
        bidder.server.stop()
        #expect(ad.ecpm == 1.25)
        #expect(bidder.notices("/loss") == ["/loss?b=bad&r=3"])
    }

    /// Alone, an unreadable price is a no fill that says so (not "missing").
    @Test func anAnswerWhoseOnlyBidHasAnUnreadablePriceSaysSo() async throws {
        let bidder = try ScriptedBidder { request, _ in
            (200, Self.answer(request, seats: [("s", [Self.bid("bad", price: "1e400", lurl: nil)])]))
        }
        let (network, curl) = Self.network(bidder, clock: ManualAdClock())
        let result = try await network.load(Self.roomyBanner)
        await network.shutdown()
        await curl.shutdown()
        bidder.server.stop()
        guard case .noFill(let noFill) = result else {
            Issue.record("expected a no fill, got \(result)")
            return
        }
        #expect(noFill.reason.contains("price unreadable"), "\(noFill.reason)")
    }

    /// A bid that is not even an object is discarded alone; the answer's valid bid fills.
    @Test func aBidThatIsNotAnObjectIsDiscardedAlone() async throws {
        let bidder = try ScriptedBidder { request, _ in
            (200, Self.answer(request, seats: [("s", ["42", #""bid""#, Self.bid("good", price: "1.5", lurl: nil)])]))
        }
        let (network, curl) = Self.network(bidder, clock: ManualAdClock())
        let ad = try await network.load(Self.roomyBanner).ad
        await network.shutdown()
        await curl.shutdown()
        bidder.server.stop()
        #expect(ad?.ecpm == 1.5)
    }

    /// Tolerance stops at the bid: an answer that is not JSON, or whose top level is not an object, still fails as an
    /// invalid response.
    @Test(arguments: [#"{"id":"x","seatbid":[{"seat":"s","bid":[{"price":1e400}"#, "[1,2]", #"{"id":"x" "cur":1}"#])
    func aMalformedAnswerStillFailsAsAWhole(body: String) async throws {
        let bidder = try ScriptedBidder { _, _ in (200, body) }
        let (network, curl) = Self.network(bidder, clock: ManualAdClock())
        let error = await #expect(throws: AdError.self) { try await network.load(Self.roomyBanner) }
        #expect(error?.code == .invalidResponse, "\(String(describing: error))")
        await network.shutdown()
        await curl.shutdown()
        bidder.server.stop()
    }
}

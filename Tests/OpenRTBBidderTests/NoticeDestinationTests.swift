import AdMediation
import AdMediationTesting
import AdTransport
import CurlTransport
import Foundation
import OpenRTBBidder
import Testing

/// Notice URLs from bids obey the network's destination policy (issue 31 item 4).
@Suite("OpenRTB notice destinations", .timeLimit(.minutes(1)))
struct NoticeDestinationTests {
    /// Wins against a bid whose `nurl` points at another local server (`admin`), under `destinations`; returns how
    /// many requests reached that server once the network has sent everything it queued.
    private func winNoticeRequests(_ destinations: DestinationPolicy?) async throws -> Int {
        let admin = try LoopbackHTTPServer { _ in .respond(.init(status: 204)) }
        defer { admin.stop() }
        let bidder = try ScriptedBidder { request, _ in
            (200, ScriptedBidder.bid(request, admin.baseURL + "/admin", ["burl": NSNull(), "lurl": NSNull()]))
        }
        defer { bidder.server.stop() }
        let (network, curl) = BiddingNetworkTests.network(bidder) { $0.destinations = destinations }
        let ad = try #require(try await network.load(banner).ad)
        #expect(ad.settleAuction(.won(clearingPrice: 2.5)))
        await network.shutdown()
        await curl.shutdown()
        return admin.requestsReceived
    }

    @Test func aWinNoticeToALoopbackPortTheConfigurationDoesNotAllowIsNotFetched() async throws {
        #expect(try await winNoticeRequests(.strict) == 0)
    }

    @Test func aWinNoticeToLoopbackIsFetchedWhenTheConfigurationAllowsIt() async throws {
        #expect(try await winNoticeRequests(.localDevelopment) == 1)
    }

    @Test func aBidWhoseNoticeIsRefusedStillFills() async throws {
        let bidder = try ScriptedBidder { request, _ in
            (200, ScriptedBidder.bid(request, "http://2130706433:9", ["burl": "javascript:alert(1)"]))
        }
        defer { bidder.server.stop() }
        let (network, curl) = BiddingNetworkTests.network(bidder)
        let ad = try #require(try await network.load(banner).ad)
        #expect(ad.ecpm == 2.5)
        try await ad.report(.impression)  // the billing notice is refused, not sent: the impression still counts
        await network.shutdown()
        await curl.shutdown()
    }
}

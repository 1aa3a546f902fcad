import AdMediation
import AdMediationTesting
import AdTransport
import Foundation
import Testing

@testable import OpenRTBBidder

/// Issue 45, work per answer: one bid answer of 60 000 bids (3.8 MB, inside the generic 4 MiB / 10 000-per-array
/// limits) cost ~2.4 s of CPU that could not be cancelled. The limits are now sized to one impression's answer.
/// Never called: the parse under test sends nothing.
private struct UnusedHTTPClient: HTTPClient {
    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        throw HTTPClientError(.connectionRefused, "not used")
    }
}

@Suite("A bid answer costs bounded work")
struct BoundedAnswerTests {
    private func network() -> BiddingNetwork {
        var configuration = BiddingNetwork.Configuration(baseURL: "https://rtb.example")
        configuration.noticeAttempts = 1
        return BiddingNetwork(configuration: configuration, http: UnusedHTTPClient(), clock: ManualAdClock())
    }

    private func answer(seats: Int, bidsPerSeat: Int) -> Data {
        let bid = #"{"id":"b","impid":"1","price":1.5,"adm":"<a/>","crid":"c"}"#
        let seat = #"{"seat":"s","bid":["# + Array(repeating: bid, count: bidsPerSeat).joined(separator: ",") + "]}"
        let seats = Array(repeating: seat, count: seats).joined(separator: ",")
        return Data(#"{"id":"auction","cur":"USD","seatbid":[\#(seats)]}"#.utf8)
    }

    @Test func sixtyThousandBidsAreRefusedBeforeAnyIsDecoded() throws {
        let body = answer(seats: 6, bidsPerSeat: 10_000)
        #expect(body.count > 3_000_000)
        #expect(throws: AdError.self) {
            _ = try network().parse(
                body, auctionID: "auction", request: AdRequest(placement: "p", format: .banner(.standard)))
        }
    }

    /// Within the size bound, only the first bids of each seat are decoded: OpenRTB 2.6 §4.2.2 (a seat bids on the
    /// impression), Prebid Server's multibid (at most 9 bids per bidder and impression).
    @Test func onlyTheCappedBidsOfEachSeatAreDecoded() throws {
        let body = answer(seats: 5, bidsPerSeat: 2_000)
        #expect(body.count < OpenRTB.maxResponseBytes)
        let response = try JSONDecoder().decode(OpenRTB.BidResponse.self, from: body)
        #expect(response.seatbid?.map { $0.bid?.count ?? 0 } == Array(repeating: OpenRTB.maxBidsPerSeat, count: 5))
        #expect(response.bidsOverCap == 5 * (2_000 - OpenRTB.maxBidsPerSeat))
    }

    @Test func seatsPastTheCapAreCountedNotDecoded() throws {
        let body = answer(seats: OpenRTB.maxSeats + 7, bidsPerSeat: 1)
        let response = try JSONDecoder().decode(OpenRTB.BidResponse.self, from: body)
        #expect(response.seatbid?.count == OpenRTB.maxSeats)
        #expect(response.seatsOverCap == 7)
    }
}

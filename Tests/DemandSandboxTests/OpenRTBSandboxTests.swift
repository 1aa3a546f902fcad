import AdMediation
import AdTransport
import CurlTransport
import DemandSandbox
import Foundation
import OpenRTBSandbox
import Testing

/// The sandbox's OpenRTB bidders, spoken to directly (the adapter's own tests go through `BiddingNetwork`).
@Suite("Sandbox: OpenRTB bidders", .timeLimit(.minutes(1)))
struct OpenRTBSandboxTests {
    static let rtbHeaders: HTTPHeaders = ["Content-Type": "application/json", "x-openrtb-version": "2.6"]

    static func auction(id: String = "a1", floor: Double? = nil, tmax: Int? = 300, imps: Int = 1) -> String {
        let imp = #"{"id":"1","tagid":"t","banner":{"w":320,"h":50}\#(floor.map { ",\"bidfloor\":\($0)" } ?? "")}"#
        let tmaxField = tmax.map { ",\"tmax\":\($0)" } ?? ""
        return #"{"id":"\#(id)"\#(tmaxField),"imp":[\#(Array(repeating: imp, count: imps).joined(separator: ","))]}"#
    }

    @Test func aBidCarriesTheAuctionIdTheImpressionSizeAndNoticeURLs() async throws {
        let scenario = SandboxScenario(networks: ["b": NetworkScenario(ecpm: .fixed(2.5))])
        try await withSandbox(scenario) { sandbox, client in
            let url = sandbox.bidderBaseURL("b") + "/openrtb2/auction"
            let response = try await client.send(post(url, Self.auction(), headers: Self.rtbHeaders))
            let root = try json(response)
            let bid = try #require(((root["seatbid"] as? [[String: Any]])?.first?["bid"] as? [[String: Any]])?.first)
            #expect(root["id"] as? String == "a1" && bid["impid"] as? String == "1" && bid["price"] as? Double == 2.5)
            #expect(bid["w"] as? Int == 320 && bid["h"] as? Int == 50)
            for key in ["nurl", "burl", "lurl"] { #expect((bid[key] as? String)?.hasPrefix(sandbox.rootURL) == true) }
            #expect(sandbox.routes(OpenRTBRoutes.self)?.records.bidRequests.count == 1)
        }
    }

    @Test func aPriceUnderTheFloorIsANoBid() async throws {
        let scenario = SandboxScenario(networks: ["b": NetworkScenario(ecpm: .fixed(1.0))])
        try await withSandbox(scenario) { sandbox, client in
            let url = sandbox.bidderBaseURL("b") + "/openrtb2/auction"
            let root = try json(try await client.send(post(url, Self.auction(floor: 1.5), headers: Self.rtbHeaders)))
            #expect(root["seatbid"] == nil && root["nbr"] as? Int == 0 && root["id"] as? String == "a1")
        }
    }

    @Test(arguments: [
        ("no version header", "missing", 300, 1),
        ("no tmax", "ok", -1, 1),
        ("two impressions", "ok", 300, 2),
    ])
    func aRequestOutsideTheContractIsA400(_ name: String, header: String, tmax: Int, imps: Int) async throws {
        try await withSandbox { sandbox, client in
            let url = sandbox.bidderBaseURL("b") + "/openrtb2/auction"
            let headers: HTTPHeaders = header == "ok" ? Self.rtbHeaders : ["Content-Type": "application/json"]
            let body = Self.auction(tmax: tmax < 0 ? nil : tmax, imps: imps)
            let response = try await client.send(post(url, body, headers: headers))
            #expect(response.status == 400 && errorCode(response) == "invalid_request", "\(name)")
        }
    }

    @Test func noticesAreRecordedWithTheirPriceAndReason() async throws {
        try await withSandbox { sandbox, client in
            let base = sandbox.bidderBaseURL("b") + "/notice"
            _ = try await client.send(HTTPRequest(url: base + "/win?bid=b-1&price=2.5"))
            _ = try await client.send(HTTPRequest(url: base + "/loss?bid=b-2&price=2.5&reason=102"))
            let notices = (sandbox.routes(OpenRTBRoutes.self)?.records.bidNotices ?? [])
            #expect(notices.map(\.kind) == [.win, .loss])
            #expect(notices.map(\.bidID) == ["b-1", "b-2"] && notices[1].reason == "102" && notices[0].price == "2.5")
        }
    }

    @Test func aDriftPhaseOutOfRangeIsRefusedNamingTheField() {
        let json = #"{"networks": {"b": {"drift": [{"after_requests": 10, "fill_rate": 2}]}}}"#
        do {
            _ = try SandboxScenario.decode(json: Data(json.utf8))
            Issue.record("a drift fill rate of 2 must be refused")
        } catch {
            #expect("\(error)".contains("networks.b.drift[0].fill_rate: must be 0…1, got 2.0"), "\(error)")
        }
    }
}

import AdMediation
import AdTransport
import Foundation
import Testing

@testable import AppOpenAds

/// URLs in an app-open answer come from outside: tracking and creative URLs must pass the network's destination
/// policy (issue 31 items 4 and 7), or the ad is not served.
@Suite("App-open: URLs from answers obey the destination policy")
struct AppOpenDestinationTests {
    func answer(impression: String, creative: String) -> Data {
        Data(
            (#"{"ad_id":"a1","creative":{"type":"image","url":"\#(creative)"},"#
                + #""tracking":{"impression":"\#(impression)","click":"https://t.example/c"}}"#).utf8)
    }

    func network(baseURL: String = "https://ads.example") -> AppOpenNetwork {
        AppOpenNetwork(configuration: .init(baseURL: baseURL), http: NoHTTP())
    }

    struct NoHTTP: HTTPClient {
        func send(_ request: HTTPRequest) async throws -> HTTPResponse {
            throw HTTPClientError(.other, "no network in this test")
        }
    }

    @Test(arguments: [
        "http://127.0.0.1:9/admin", "http://2130706433/x", "javascript:alert(1)", "file:///etc/passwd",
        "http://t.example/i",
    ])
    func aTrackingURLThePolicyRefusesRefusesTheFill(url: String) {
        let request = AdRequest(placement: "unit", format: .appOpen)
        #expect(throws: AdError.self) {
            try network().parse(answer(impression: url, creative: "https://cdn.example/a.png"), request: request)
        }
    }

    @Test(arguments: ["data:image/png;base64,AAAA", "file:///creative.png", "http://0.0.0.0/a.png"])
    func aCreativeURLThePolicyRefusesRefusesTheFill(url: String) {
        let request = AdRequest(placement: "unit", format: .appOpen)
        #expect(throws: AdError.self) {
            try network().parse(answer(impression: "https://t.example/i", creative: url), request: request)
        }
    }

    @Test func httpsURLsToPublicHostsAreServed() throws {
        let request = AdRequest(placement: "unit", format: .appOpen)
        let ad = try network().parse(
            answer(impression: "https://t.example/i", creative: "https://cdn.example/a.png"), request: request)
        #expect(ad.creative.assetURL == "https://cdn.example/a.png")
    }
}

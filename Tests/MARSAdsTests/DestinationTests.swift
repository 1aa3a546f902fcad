import AdMediation
import AdMediationTesting
import AdTransport
import CurlTransport
import Foundation
import Testing

@testable import MARSAds

/// URLs in MARS answers and callbacks obey the destination policy (issue 31 items 4, 7).
@Suite("MARS fill and callback destinations", .timeLimit(.minutes(1)))
struct MarsDestinationTests {
    private func tile(_ id: String, url: String, imageURL: String, impression: String = "https://t.example/i") -> String
    {
        (#"{"format":"tile","url":"\#(url)","image_url":"\#(imageURL)","block_key":"bk_\#(id)","name":"n","#
            + #""callbacks":{"click":"https://t.example/c","impression":"\#(impression)","report":null}}"#)
    }

    @Test(arguments: [
        ("javascript:alert(document.cookie)", "https://img.example/x.png"),
        ("file:///etc/passwd", "https://img.example/x.png"),
        ("https://a.example/x", "data:image/png;base64,AAAA"),
        ("https://a.example/x", "file:///etc/hosts"),
    ])
    func aTileWhoseLandingPageOrImageHasAnotherSchemeIsDropped(url: String, imageURL: String) async throws {
        let good = tile("ok", url: "https://a/ok", imageURL: "https://i/ok.png")
        let body = #"{"p":[\#(tile("bad", url: url, imageURL: imageURL)),\#(good)]}"#
        let (client, server, curl, telemetry) = try craftedClient(body: body)
        let tiles = try await client.requestTileAds([.init(placementId: "p")])
        #expect(tiles["p"]?.blockKey == "bk_ok")
        #expect(telemetry.log.filter { $0 == "deser:invalid_ad_item" }.count == 1)
        await curl.shutdown()
        server.stop()
    }

    @Test func aTileWhoseImpressionCallbackIsAnOddLoopbackSpellingIsDropped() async throws {
        let bad = tile("bad", url: "https://a/x", imageURL: "https://i/x.png", impression: "http://2130706433:9/i")
        let (client, server, curl, _) = try craftedClient(body: #"{"p":[\#(bad)]}"#)
        #expect(try await client.requestTileAds([.init(placementId: "p")]).isEmpty)
        await curl.shutdown()
        server.stop()
    }

    @Test func aCallbackToAnAddressThePolicyRefusesIsNotSent() async throws {
        let (client, server, curl, _) = try craftedClient(body: "{}")
        let admin = try LoopbackHTTPServer { _ in .respond(.init(status: 200)) }
        for url in ["http://0.0.0.0:\(admin.port)/c", "http://[::ffff:127.0.0.1]:\(admin.port)/c"] {
            let error = await marsError { try await client.recordClick(url) }
            #expect(error?.reason == .marsInvalidCallbackURL)
        }
        #expect(admin.requestsReceived == 0)
        admin.stop()
        await curl.shutdown()
        server.stop()
    }

    @Test func theProductionEnvironmentAllowsHTTPSToPublicHostsOnly() {
        let policy = DestinationPolicy.forNetwork(baseURL: MozAdsEnvironment.prod.baseURL)
        #expect(policy.allows("https://ads.mozilla.org/v1/t?x=1", as: .callback))
        #expect(!policy.allows("http://127.0.0.1:8080/admin", as: .callback))
        #expect(!policy.allows("http://ads.example.com/c", as: .callback))
    }
}

import AdMediation
import AdTransport
import Foundation
import Testing

@testable import GrowthCatAds

/// An asset URL that is not http(s) to a plain address makes the ad unservable (issue 31 items 4, 7).
@Suite("GrowthCat asset URLs")
struct AssetURLTests {
    private func catalog(_ assetURL: String) -> Data {
        let ad = { (id: String, url: String) in
            (#"{"campaign":{"id":"c"},"creative":{"id":"\#(id)","creative_type":"image","#
                + #""public_asset_url":"\#(url)"},"tracking":{"allocation_id":"a","token":"t"}}"#)
        }
        return Data(#"{"ads":[\#(ad("bad", assetURL)),\#(ad("ok", "https://cdn.example/a.png"))]}"#.utf8)
    }

    @Test(arguments: [
        "javascript:alert(1)", "file:///etc/passwd", "data:image/png;base64,AAAA", "http://2130706433/a.png",
        "http://0.0.0.0:8080/a.png", "https://user:pw@cdn.example/a.png",
    ])
    func anAdWhoseAssetURLIsRefusedIsSkipped(url: String) throws {
        let (ads, _) = try GrowthCatClient.parseCatalog(catalog(url))
        #expect(ads.map(\.creativeID) == ["ok"])
    }

    @Test func aPlainAssetURLIsKept() throws {
        let (ads, _) = try GrowthCatClient.parseCatalog(catalog("http://127.0.0.1:8080/a.png"))
        #expect(ads.map(\.creativeID) == ["bad", "ok"])
    }
}

extension AssetURLTests {
    /// Issue 45: asset URLs were checked against a lenient shape allowing loopback, private and link-local addresses:
    /// with a production https base URL the SDK fetched a server-chosen `http://127.0.0.1:<port>/admin/export?all=1`,
    /// cached the answer and handed its path to the app. Assets now meet the network's destination policy, as
    /// Chartboost's do: the ad is not served.
    @Test(arguments: [
        "http://127.0.0.1:8080/admin/export?all=1", "https://169.254.169.254/latest/meta-data",
        "https://10.0.0.1/a.png",
        "https://[64:ff9b::127.0.0.1]/a.png", "http://cdn.example/a.png",
    ])
    func withAProductionBaseURLAnAssetOnAnInwardOrPlainHTTPAddressIsNotServed(url: String) throws {
        let (ads, _) = try GrowthCatClient.parseCatalog(catalog(url))
        let production = DestinationPolicy.forNetwork(baseURL: "https://api.growthcat.example")
        #expect(GrowthCatClient.servable(ads, under: production).map(\.creativeID) == ["ok"])
    }

    /// A local base URL (the sandbox, development) keeps loopback assets, never private or link-local ones.
    @Test func withALoopbackBaseURLALoopbackAssetIsServedAndAPrivateOneIsNot() throws {
        let local = DestinationPolicy.forNetwork(baseURL: "http://127.0.0.1:8080")
        let (loopback, _) = try GrowthCatClient.parseCatalog(catalog("http://127.0.0.1:9/a.png"))
        #expect(GrowthCatClient.servable(loopback, under: local).map(\.creativeID) == ["bad", "ok"])
        let (inward, _) = try GrowthCatClient.parseCatalog(catalog("https://192.168.1.1/a.png"))
        #expect(GrowthCatClient.servable(inward, under: local).map(\.creativeID) == ["ok"])
    }

    /// Through the client, over loopback HTTP: the catalog's only ad has a link-local asset; the load does not fill
    /// and nothing is fetched from it.
    @Test func aLoadWhoseOnlyAdHasALinkLocalAssetDoesNotFill() async throws {
        let server = try ScriptedGrowthCat()
        server.script(
            "/ads/catalog",
            [
                .init(
                    status: 200,
                    body: #"{"ads":[{"placement":{"key":"p","format":"interstitial"},"campaign":{"id":"c"},"#
                        + #""creative":{"id":"cr","creative_type":"image","#
                        + #""public_asset_url":"https://169.254.169.254/latest/meta-data"},"#
                        + #""tracking":{"allocation_id":"a","token":"t"}}]}"#)
            ])
        let (client, curl) = try scriptedClient(server)
        defer { server.server.stop() }
        #expect(try await client.loadAd(placementKey: "p") == nil)
        await curl.shutdown()
    }
}

import AdMediation
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

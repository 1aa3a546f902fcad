import AdMediation
import AdMediationTesting
import CurlTransport
import Foundation
import Testing

@testable import GrowthCatAds

/// Issue 29, item 9: the server's format control, App Store install ads, and the "Sponsored" label.
@Suite("GrowthCat format rules", .timeLimit(.minutes(2)))
struct FormatRulesTests {
    static let bannerOnlyConfig =
        #"{"app_id":"a","workspace":"test","ads":{"ads_enabled":true,"formats":["banner"],"#
        + #""ad_cache_ttl_seconds":300,"max_offline_ad_events":500}}"#

    static func catalog(placement: String = "null", creative: String = #""creative_type":"image""#) -> String {
        #"{"ads":[{"placement":\#(placement),"campaign":{"id":"c"},"creative":{"id":"cr",\#(creative),"#
            + #""public_asset_url":"https://x/a.png"},"tracking":{"allocation_id":"a","token":"t"}}]}"#
    }

    func network(_ server: ScriptedGrowthCat) throws -> (GrowthCatNetwork, CurlHTTPClient) {
        let (client, curl) = try scriptedClient(server)
        return (GrowthCatNetwork(client: client), curl)
    }

    /// Seed: the bootstrap's "allowed formats" are server-side format control; an ad with a null `placement` must not
    /// slip past it (it filled an interstitial request when only `banner` was allowed).
    @Test func aNullPlacementAdDoesNotFillAnInterstitialWhenOnlyBannersAreAllowed() async throws {
        let server = try ScriptedGrowthCat()
        server.script("/sdk/config", [.init(status: 200, body: Self.bannerOnlyConfig)])
        server.script("/ads/catalog", [.init(status: 200, body: Self.catalog())])
        let (network, curl) = try network(server)
        let result = try await network.load(AdRequest(placement: "p", format: .interstitial))
        #expect(result.ad == nil, "interstitials are not in the allow-list")
        await curl.shutdown()
        server.server.stop()
    }

    /// …while the same null-placement ad still fills the format the server allows.
    @Test func aNullPlacementAdFillsAnAllowedFormat() async throws {
        let server = try ScriptedGrowthCat()
        server.script("/sdk/config", [.init(status: 200, body: Self.bannerOnlyConfig)])
        server.script("/ads/catalog", [.init(status: 200, body: Self.catalog())])
        let (network, curl) = try network(server)
        let result = try await network.load(AdRequest(placement: "p", format: .banner(.standard)))
        #expect(result.ad != nil)
        await curl.shutdown()
        server.server.stop()
    }

    /// Spec: `app_store` is an App Store install with "`store_kit` present, `presentation` is `overlay` or
    /// `product_view`": without an app id, or with another presentation, StoreKit cannot show it.
    @Test(arguments: [
        #""creative_type":"app_store""#,
        #""creative_type":"app_store","store_kit":{"presentation":"overlay"}"#,
        #""creative_type":"app_store","store_kit":{"app_store_id":"123","presentation":"fullscreen"}"#,
    ])
    func anAppStoreAdWithoutAUsableStoreKitIsNotServed(creative: String) async throws {
        let server = try ScriptedGrowthCat()
        server.script("/ads/catalog", [.init(status: 200, body: Self.catalog(creative: creative))])
        let (client, curl) = try scriptedClient(server)
        #expect(try await client.loadAd(placementKey: "p", format: .interstitial) == nil)
        await curl.shutdown()
        server.server.stop()
    }

    /// A complete App Store ad is served.
    @Test func anAppStoreAdWithStoreKitIsServed() async throws {
        let server = try ScriptedGrowthCat()
        let creative = #""creative_type":"app_store","store_kit":{"app_store_id":"123","presentation":"product_view"}"#
        server.script("/ads/catalog", [.init(status: 200, body: Self.catalog(creative: creative))])
        let (client, curl) = try scriptedClient(server)
        let ad = try await client.loadAd(placementKey: "p", format: .interstitial)
        #expect(ad?.appStoreID == "123" && ad?.storePresentation == "product_view")
        await curl.shutdown()
        server.server.stop()
    }

    /// Seed: "Every ad format shows a visible 'Sponsored' label — required by App Store policy" — banners included.
    @Test func aGrowthCatBannerCarriesTheSponsoredLabel() async throws {
        let server = try ScriptedGrowthCat()
        server.script(
            "/ads/catalog",
            [.init(status: 200, body: Self.catalog(placement: #"{"key":"p","format":"banner"}"#))])
        let (network, curl) = try network(server)
        let ad = try #require(try await network.load(AdRequest(placement: "p", format: .banner(.standard))).ad)
        #expect(ad.creative.disclosureLabel == "Sponsored")
        await curl.shutdown()
        server.server.stop()
    }
}

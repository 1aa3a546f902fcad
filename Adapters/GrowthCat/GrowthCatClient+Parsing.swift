import AdMediation
import AdStorage
import AdTransport
import AdapterKit
import AdapterSupport
import CoreMetrics
import Foundation
import Logging

/// Decoding the server's answers: Codable wire types read field by field (bounded JSON, checked values; fuzzed by
/// `make fuzz`).
extension GrowthCatClient {
    /// Parses `GET /v1/sdk/config`. Numbers out of range fall back or clamp, per field:
    /// `ad_cache_ttl_seconds` is clamped to 0…7 days (a negative or non-numeric value means the default 300);
    /// `max_offline_ad_events` is clamped to 1…100 000 (default 500).
    package static func parseBootstrap(_ body: Data) throws(AdError) -> GrowthCatSDKBootstrap {
        try WireJSON.decode(Wire.Bootstrap.self, from: body, limits: limits, what: "the bootstrap").value
    }

    /// A TTL in whole seconds: clamped to 0…7 days; `nil` when negative, not finite or not a number.
    static func ttlSeconds(_ value: Double?) -> Int? {
        value.flatMap { OutsideValue.wholeSeconds($0) }.map { Int($0) }
    }

    /// A time in seconds for the presentation rules: clamped to 0…7 days; `nil` (absent) when negative, not finite
    /// or not a number.
    static func seconds(_ value: Double?) -> Double? {
        value.flatMap { OutsideValue.duration(seconds: $0) }.map(\.seconds)
    }

    /// Parses a catalog or serve body: the servable ads (an ad missing a required field is skipped) and the TTL.
    package static func parseCatalog(_ body: Data) throws(AdError) -> ([GrowthCatAd], Int?) {
        let catalog = try WireJSON.decode(Wire.Catalog.self, from: body, limits: limits, what: "the catalog")
        return (catalog.ads, catalog.cacheTTL)
    }

    /// Parses the events answer (`{"accepted": 3, "duplicates": 1}`): counts clamped to 0…1 000 000; absent or
    /// unreadable counts are 0. A body that is not a JSON object is `invalidResponse`.
    package static func parseEventsAnswer(_ body: Data) throws(AdError) -> (accepted: Int, duplicates: Int) {
        let answer = try WireJSON.decode(Wire.EventsAnswer.self, from: body, limits: limits, what: "the events answer")
        return (answer.accepted, answer.duplicates)
    }

    /// Parses the reward validation answer. A validated reward whose `reward` cannot be read (missing name, an amount
    /// that is not a finite non-negative number) is `invalidResponse`, never a silent "no reward".
    package static func parseRewardAnswer(_ body: Data) throws(AdError) -> AdRewardValidationResponse {
        let answer = try WireJSON.decode(
            Wire.RewardAnswer.self, from: body, limits: limits, what: "the reward validation answer")
        guard let validated = answer.validated else {
            throw AdError(.invalidResponse, "the reward validation answer has no boolean reward_validated")
        }
        guard validated else {
            return AdRewardValidationResponse(rewardValidated: false, accepted: answer.accepted, reward: nil)
        }
        guard let reward = answer.reward else {
            throw AdError(
                .invalidResponse, "the reward was validated but its reward {name, amount} is missing or unreadable")
        }
        return AdRewardValidationResponse(rewardValidated: true, accepted: answer.accepted, reward: reward)
    }

    /// A count clamped to 0…1 000 000; 0 when absent or unreadable.
    static func count(_ value: Double?) -> Int { value.map { Int(min(max($0, 0), 1_000_000)) } ?? 0 }

    /// The shape every asset URL must have to be parsed at all (no `javascript:`, `file:`, user name or odd
    /// address); the client then holds each ad to its network's policy (``servable(_:under:)``).
    static let assetShape = DestinationPolicy(allowsHTTP: true, allowsLoopback: true, allowsPrivateNetworks: true)

    /// The ads whose asset URL meets `policy` (the network's destination policy, as Chartboost's assets): with a
    /// production base URL an asset on `127.0.0.1`, `169.254.169.254` or `10.0.0.1` is refused (logged, counted) and
    /// its ad is not served, so the SDK never fetches, caches and hands the app a server-chosen inward URL.
    static func servable(_ ads: [GrowthCatAd], under policy: DestinationPolicy) -> [GrowthCatAd] {
        ads.filter { ad in
            do throws(DestinationRefusal) {
                try policy.check(ad.assetURL, as: .asset)
                return true
            } catch {
                DestinationPolicy.record(error, kind: .asset, network: "growthcat")
                return false
            }
        }
    }

    /// The wire types: each reads its fields one by one, so a bad value is absent rather than fatal.
    enum Wire {
        struct Bootstrap: Decodable {
            let value: GrowthCatSDKBootstrap

            init(from decoder: any Decoder) throws {
                let c = try decoder.container(keyedBy: WireKey.self)
                let ads = c.object("ads", keyedBy: WireKey.self)
                value = GrowthCatSDKBootstrap(
                    appID: c.string("app_id") ?? "", workspace: c.string("workspace") ?? "",
                    adsConfig: GrowthCatSDKAdsConfig(
                        adsEnabled: ads?.bool("ads_enabled") ?? false,
                        formats: Set((ads?.strings("formats") ?? []).compactMap(GrowthCatAdFormat.init(rawValue:))),
                        adCacheTTLSeconds: ttlSeconds(ads?.number("ad_cache_ttl_seconds")) ?? 300,
                        maxOfflineAdEvents: ads?.number("max_offline_ad_events")
                            .flatMap { $0 >= 1 ? Int(min($0, 100_000)) : nil } ?? 500))
            }
        }

        struct Catalog: Decodable {
            let ads: [GrowthCatAd]
            let cacheTTL: Int?

            init(from decoder: any Decoder) throws {
                let c = try decoder.container(keyedBy: WireKey.self)
                guard let list = c.lossyList("ads", of: Ad.self) else {
                    throw AdError(.invalidResponse, "the catalog has no ads list")
                }
                let mediaTTL = ttlSeconds(c.number("media_cache_ttl_seconds"))
                ads = list.map { wire in
                    var ad = wire.ad
                    ad.mediaCacheTTLSeconds = mediaTTL
                    return ad
                }
                cacheTTL = ttlSeconds(c.number("cache_ttl_seconds"))
            }
        }

        struct EventsAnswer: Decodable {
            let accepted: Int
            let duplicates: Int

            init(from decoder: any Decoder) throws {
                let c = try decoder.container(keyedBy: WireKey.self)
                accepted = count(c.number("accepted"))
                duplicates = count(c.number("duplicates"))
            }
        }

        struct RewardAnswer: Decodable {
            let validated: Bool?
            let accepted: Int
            let reward: (name: String, amount: Double)?

            init(from decoder: any Decoder) throws {
                let c = try decoder.container(keyedBy: WireKey.self)
                validated = c.bool("reward_validated")
                accepted = count(c.number("accepted"))
                let r = c.object("reward", keyedBy: WireKey.self)
                if let name = r?.string("name"), let amount = r?.number("amount"), amount >= 0, amount <= 1e12 {
                    reward = (name, amount)
                } else {
                    reward = nil
                }
            }
        }

        /// One catalog ad; throws (and is skipped by the list) when a required field is missing or of another type.
        struct Ad: Decodable {
            let ad: GrowthCatAd

            struct Missing: Error {}

            init(from decoder: any Decoder) throws {
                let o = try decoder.container(keyedBy: WireKey.self)
                guard let campaign = o.object("campaign", keyedBy: WireKey.self),
                    let campaignID = campaign.string("id"),
                    let creative = o.object("creative", keyedBy: WireKey.self), let creativeID = creative.string("id"),
                    let type = creative.string("creative_type"), let url = creative.string("public_asset_url"),
                    let tracking = o.object("tracking", keyedBy: WireKey.self),
                    let allocation = tracking.string("allocation_id"), let token = tracking.string("token")
                else { throw Missing() }
                // The asset is essential: an ad whose asset URL is not an http(s) URL to a plain address (no
                // `javascript:`, `file:` or `data:`, no user name, no `0.0.0.0` or `2130706433`) is not servable.
                do throws(DestinationRefusal) {
                    try assetShape.check(url, as: .asset)
                } catch {
                    DestinationPolicy.record(error, kind: .asset, network: "growthcat")
                    throw Missing()
                }
                var placement: GrowthCatAd.Placement?
                if let p = o.object("placement", keyedBy: WireKey.self), let key = p.string("key"),
                    let format = p.string("format")
                {
                    // A placement of a format this SDK does not know cannot be rendered: the ad is not servable.
                    guard let format = GrowthCatAdFormat(rawValue: format) else { throw Missing() }
                    placement = .init(
                        id: p.string("id"), key: key, format: format, rewardEnabled: p.bool("reward_enabled") ?? false,
                        rewardName: p.string("reward_name"),
                        rewardAmount: p.number("reward_amount").flatMap { $0 >= 0 && $0 <= 1e12 ? $0 : nil },
                        minimumViewSeconds: seconds(p.number("minimum_view_seconds")),
                        isSkippable: p.bool("is_skippable") ?? true,
                        skippableAfterSeconds: seconds(p.number("skippable_after_seconds")))
                }
                let cache = creative.object("asset_cache", keyedBy: WireKey.self)
                let store = creative.object("store_kit", keyedBy: WireKey.self)
                let close = o.object("close_policy", keyedBy: WireKey.self)
                ad = GrowthCatAd(
                    placement: placement, campaignID: campaignID, campaignMode: campaign.string("mode"),
                    campaignObjective: campaign.string("objective"),
                    campaignPriorityWeight: campaign.number("priority_weight").flatMap {
                        $0 >= 0 && $0 <= 1e12 ? $0 : nil
                    },
                    creativeID: creativeID, creativeType: type, assetURL: url, headline: creative.string("headline"),
                    body: creative.string("body"), layout: creative.string("layout"),
                    ctaText: creative.string("cta_text"), durationSeconds: seconds(creative.number("duration_seconds")),
                    storePresentation: store?.string("presentation"), appStoreID: store?.string("app_store_id"),
                    assetCacheable: cache?.bool("cacheable") ?? false,
                    assetTTLSeconds: ttlSeconds(cache?.number("ttl_seconds")), assetStrategy: cache?.string("strategy"),
                    allocationID: allocation, token: token, closeIsSkippable: close?.bool("is_skippable"),
                    closeSkippableAfterSeconds: seconds(close?.number("skippable_after_seconds")),
                    rewardGrantAfterSeconds: seconds(close?.number("reward_grant_after_seconds")),
                    ecpm: WirePrice.ecpm(o.number("ecpm")))
            }
        }
    }
}

import AdMediation
import AdStorage
import AdapterSupport
import CoreMetrics
import Foundation
import Logging

/// Decoding the server's answers (bounded JSON, checked values; fuzzed by `make fuzz`).
extension GrowthCatClient {
    /// A JSON object from a body, after the size and depth limits; `what` names the body in errors.
    static func jsonObject(_ body: Data, _ what: String) throws(AdError) -> [String: Any] {
        if let violation = limits.violation(in: body) {
            throw AdError(.invalidResponse, "\(what): \(violation)")
        }
        guard let object = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] else {
            throw AdError(.invalidResponse, "\(what) is not a JSON object")
        }
        return object
    }

    /// Parses `GET /v1/sdk/config`. Numbers out of range fall back or clamp, per field:
    /// `ad_cache_ttl_seconds` is clamped to 0…7 days (a negative or non-numeric value means the default 300);
    /// `max_offline_ad_events` is clamped to 1…100 000 (default 500).
    package static func parseBootstrap(_ body: Data) throws(AdError) -> GrowthCatSDKBootstrap {
        let object = try jsonObject(body, "the bootstrap")
        let ads = object["ads"] as? [String: Any]
        return GrowthCatSDKBootstrap(
            appID: OutsideValue.string(object["app_id"]) ?? "",
            workspace: OutsideValue.string(object["workspace"]) ?? "",
            adsConfig: GrowthCatSDKAdsConfig(
                adsEnabled: OutsideValue.bool(ads?["ads_enabled"]) ?? false,
                formats: Set(
                    (ads?["formats"] as? [Any] ?? []).compactMap(OutsideValue.string).compactMap(
                        GrowthCatAdFormat.init(rawValue:))),
                adCacheTTLSeconds: ttlSeconds(ads?["ad_cache_ttl_seconds"]) ?? 300,
                maxOfflineAdEvents: OutsideValue.number(ads?["max_offline_ad_events"])
                    .flatMap { $0 >= 1 ? Int(min($0, 100_000)) : nil } ?? 500))
    }

    /// A TTL in whole seconds: clamped to 0…7 days; `nil` when negative, not finite or not a number.
    static func ttlSeconds(_ value: Any?) -> Int? {
        OutsideValue.number(value).flatMap { OutsideValue.wholeSeconds($0) }.map { Int($0) }
    }

    /// A time in seconds for the presentation rules: clamped to 0…7 days; `nil` (absent) when negative, not finite
    /// or not a number.
    static func seconds(_ value: Any?) -> Double? {
        OutsideValue.number(value).flatMap { OutsideValue.duration(seconds: $0) }.map(\.seconds)
    }

    /// A price: finite, 0…1 000 000; `nil` otherwise.
    static func price(_ value: Any?) -> Double? {
        WirePrice.ecpm(OutsideValue.number(value))
    }

    /// Parses a catalog or serve body: the servable ads (an ad missing a required field is skipped) and the TTL.
    package static func parseCatalog(_ body: Data) throws(AdError) -> ([GrowthCatAd], Int?) {
        let object = try jsonObject(body, "the catalog")
        guard let list = object["ads"] as? [Any] else {
            throw AdError(.invalidResponse, "the catalog has no ads list")
        }
        let mediaTTL = ttlSeconds(object["media_cache_ttl_seconds"])
        let ads = list.compactMap { ($0 as? [String: Any]).flatMap(parseAd) }.map { ad -> GrowthCatAd in
            var ad = ad
            ad.mediaCacheTTLSeconds = mediaTTL
            return ad
        }
        return (ads, ttlSeconds(object["cache_ttl_seconds"]))
    }

    /// Parses the events answer (`{"accepted": 3, "duplicates": 1}`): counts clamped to 0…1 000 000; absent or
    /// unreadable counts are 0. A body that is not a JSON object is `invalidResponse`.
    package static func parseEventsAnswer(_ body: Data) throws(AdError) -> (accepted: Int, duplicates: Int) {
        let object = try jsonObject(body, "the events answer")
        func count(_ key: String) -> Int {
            OutsideValue.number(object[key]).map { Int(min(max($0, 0), 1_000_000)) } ?? 0
        }
        return (count("accepted"), count("duplicates"))
    }

    /// Parses the reward validation answer. A validated reward whose `reward` cannot be read (missing name, an amount
    /// that is not a finite non-negative number) is `invalidResponse`, never a silent "no reward".
    package static func parseRewardAnswer(_ body: Data) throws(AdError) -> AdRewardValidationResponse {
        let object = try jsonObject(body, "the reward validation answer")
        guard let validated = OutsideValue.bool(object["reward_validated"]) else {
            throw AdError(.invalidResponse, "the reward validation answer has no boolean reward_validated")
        }
        let accepted = OutsideValue.number(object["accepted"]).map { Int(min(max($0, 0), 1_000_000)) } ?? 0
        guard validated else {
            return AdRewardValidationResponse(rewardValidated: false, accepted: accepted, reward: nil)
        }
        guard let r = object["reward"] as? [String: Any], let name = OutsideValue.string(r["name"]),
            let amount = OutsideValue.number(r["amount"]), amount >= 0, amount <= 1e12
        else {
            throw AdError(
                .invalidResponse, "the reward was validated but its reward {name, amount} is missing or unreadable")
        }
        return AdRewardValidationResponse(rewardValidated: true, accepted: accepted, reward: (name, amount))
    }

    static func parseAd(_ o: [String: Any]) -> GrowthCatAd? {
        guard let campaign = o["campaign"] as? [String: Any], let campaignID = campaign["id"] as? String,
            let creative = o["creative"] as? [String: Any], let creativeID = creative["id"] as? String,
            let type = creative["creative_type"] as? String, let url = creative["public_asset_url"] as? String,
            let tracking = o["tracking"] as? [String: Any], let allocation = tracking["allocation_id"] as? String,
            let token = tracking["token"] as? String
        else { return nil }
        var placement: GrowthCatAd.Placement?
        if let p = o["placement"] as? [String: Any], let key = p["key"] as? String, let format = p["format"] as? String
        {
            // A placement of a format this SDK does not know cannot be rendered: the ad is not servable.
            guard let format = GrowthCatAdFormat(rawValue: format) else { return nil }
            placement = .init(
                id: OutsideValue.string(p["id"]), key: key, format: format,
                rewardEnabled: OutsideValue.bool(p["reward_enabled"]) ?? false,
                rewardName: OutsideValue.string(p["reward_name"]),
                rewardAmount: OutsideValue.number(p["reward_amount"]).flatMap { $0 >= 0 && $0 <= 1e12 ? $0 : nil },
                minimumViewSeconds: seconds(p["minimum_view_seconds"]),
                isSkippable: OutsideValue.bool(p["is_skippable"]) ?? true,
                skippableAfterSeconds: seconds(p["skippable_after_seconds"]))
        }
        let cache = creative["asset_cache"] as? [String: Any]
        let store = creative["store_kit"] as? [String: Any]
        let close = o["close_policy"] as? [String: Any]
        return GrowthCatAd(
            placement: placement, campaignID: campaignID, campaignMode: OutsideValue.string(campaign["mode"]),
            campaignObjective: OutsideValue.string(campaign["objective"]),
            campaignPriorityWeight: OutsideValue.number(campaign["priority_weight"]).flatMap {
                $0 >= 0 && $0 <= 1e12 ? $0 : nil
            },
            creativeID: creativeID, creativeType: type, assetURL: url,
            headline: OutsideValue.string(creative["headline"]), body: OutsideValue.string(creative["body"]),
            layout: OutsideValue.string(creative["layout"]), ctaText: OutsideValue.string(creative["cta_text"]),
            durationSeconds: seconds(creative["duration_seconds"]),
            storePresentation: OutsideValue.string(store?["presentation"]),
            appStoreID: OutsideValue.string(store?["app_store_id"]),
            assetCacheable: OutsideValue.bool(cache?["cacheable"]) ?? false,
            assetTTLSeconds: ttlSeconds(cache?["ttl_seconds"]),
            assetStrategy: OutsideValue.string(cache?["strategy"]), allocationID: allocation, token: token,
            closeIsSkippable: OutsideValue.bool(close?["is_skippable"]),
            closeSkippableAfterSeconds: seconds(close?["skippable_after_seconds"]),
            rewardGrantAfterSeconds: seconds(close?["reward_grant_after_seconds"]),
            ecpm: price(o["ecpm"]))
    }
}

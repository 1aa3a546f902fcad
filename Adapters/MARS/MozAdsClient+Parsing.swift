import AdMediation
import AdStorage
import AdTransport
import AdapterKit
import AdapterSupport
import Crypto
import Foundation
import ObliviousHTTP

/// Decoding and selecting the server's answer (per-field rules in docs/RELIABILITY.md; fuzzed by `make fuzz`).
extension MozAdsClient {
    // MARK: Parsing

    /// One ad item as decoded, before it is turned into a tile, spoc or image.
    package struct DecodedAd: Sendable {
        var object: [String: JSONValue]
        var callbacks: MozAdsCallbacks
    }

    func parse(_ response: HTTPResponse, placements: [PlacementSpec], hash: String) throws(AdError)
        -> [String: [DecodedAd]]
    {
        let telemetry = telemetry
        return try Self.parseAnswer(response) { telemetry.recordDeserializationError(label: $0, value: $1) }
    }

    /// Decodes a `/v1/ads` answer into ad items per placement (callbacks checked, not yet enriched). `onInvalid`
    /// hears each drop with its telemetry label: `invalid_structure` (the body is not an object: also thrown),
    /// `invalid_array` (a placement's value is not an array: skipped), `invalid_ad_item` (an item without valid
    /// callbacks: dropped, the other items stay).
    package static func parseAnswer(
        _ response: HTTPResponse,
        onInvalid: (_ label: String, _ message: String) -> Void
    ) throws(AdError) -> [String: [DecodedAd]] {
        if let error = Self.statusError(response) { throw error }
        if let violation = JSONLimits().violation(in: response.body) {
            onInvalid("invalid_structure", violation)
            throw AdError.mars(code: .json, message: "the response breaks a limit: \(violation)")
        }
        guard case .object(let object)? = try? JSONDecoder().decode(JSONValue.self, from: response.body) else {
            onInvalid("invalid_structure", "the response is not a JSON object")
            throw AdError.mars(code: .json, message: "the response is not a JSON object")
        }
        var result: [String: [DecodedAd]] = [:]
        // A `null` member, item or field is read as absent.
        for (placementID, value) in object where value != .null {
            guard case .array(let items) = value else {
                onInvalid("invalid_array", "placement \(placementID) is not an array")
                continue
            }
            var ads: [DecodedAd] = []
            for item in items where item != .null {
                switch Self.decodeItem(item) {
                case .success(let ad): ads.append(ad)
                case .failure(let message): onInvalid("invalid_ad_item", message)
                }
            }
            if !ads.isEmpty { result[placementID] = ads }
        }
        return result
    }

    /// Keeps the items that decode as `kind`, in order, each enriched with its position among the valid ones;
    /// every other item is reported (`invalid_ad_item`) and dropped. Placements left empty are absent.
    ///
    /// Every URL of an item must pass `destinations` (see ``checkURLs(_:destinations:)``): a refused click or
    /// impression callback, landing page (`url`) or image (`image_url`) drops the item; a refused `report` callback
    /// is dropped alone (the ad cannot be reported, but can be shown).
    package static func select(
        _ decoded: [String: [DecodedAd]], kind: Kind, hash: String, destinations: DestinationPolicy = .strict,
        onInvalid: (_ label: String, _ message: String) -> Void
    ) -> [String: [DecodedAd]] {
        var result: [String: [DecodedAd]] = [:]
        for (placementID, items) in decoded {
            var valid: [DecodedAd] = []
            for var ad in items {
                let ok =
                    switch kind {
                    case .tile: tile(ad) != nil
                    case .image: image(ad) != nil
                    case .spoc: spoc(ad) != nil
                    }
                guard ok else {
                    onInvalid(
                        "invalid_ad_item",
                        "an item of \(placementID) is not a valid \(kind.rawValue): a required field is missing or "
                            + "invalid"
                    )
                    continue
                }
                if let refusal = checkURLs(&ad, destinations: destinations) {
                    onInvalid("invalid_ad_item", "an item of \(placementID) was refused: \(refusal)")
                    continue
                }
                ad.callbacks = enrich(
                    ad.callbacks, hash: hash, capKey: ad.object["caps"]?.object?["cap_key"]?.string,
                    placementID: placementID, position: valid.count)
                valid.append(ad)
            }
            if !valid.isEmpty { result[placementID] = valid }
        }
        return result
    }

    enum ItemResult { case success(DecodedAd), failure(String) }

    static func decodeItem(_ item: JSONValue) -> ItemResult {
        guard let dict = item.object else { return .failure("an ad item is not an object") }
        guard let callbacks = dict["callbacks"]?.object else { return .failure("missing field `callbacks`") }
        guard let click = callbacks["click"]?.string, isAbsoluteURL(click) else {
            return .failure("callbacks.click is missing or not a URL")
        }
        guard let impression = callbacks["impression"]?.string, isAbsoluteURL(impression) else {
            return .failure("callbacks.impression is missing or not a URL")
        }
        var report: String?
        // A null `report` is absent.
        if let value = callbacks["report"], value != .null {
            guard let url = value.string, isAbsoluteURL(url) else {
                return .failure("callbacks.report is not a URL")
            }
            report = url
        }
        return .success(
            DecodedAd(object: dict, callbacks: MozAdsCallbacks(click: click, impression: impression, report: report)))
    }

    /// Checks the item's URLs with `destinations`: the click and impression callbacks (`callback`), the landing page
    /// `url` (`click`: https, or http where allowed; never `javascript:`, `file:` or `data:`) and `image_url`
    /// (`asset`). Returns the refusal that drops the item; a refused `report` callback is removed from `ad` (counted,
    /// not fatal).
    static func checkURLs(_ ad: inout DecodedAd, destinations: DestinationPolicy) -> DestinationRefusal? {
        let required: [(String?, OutsideURLKind)] = [
            (ad.callbacks.click, .callback), (ad.callbacks.impression, .callback),
            (ad.object["url"]?.string, .click), (ad.object["image_url"]?.string, .asset),
        ]
        for (url, kind) in required {
            do throws(DestinationRefusal) {
                try destinations.check(url ?? "", as: kind)
            } catch {
                DestinationPolicy.record(error, kind: kind, network: "mars")
                return error
            }
        }
        if ad.callbacks.report != nil {
            ad.callbacks.report = destinations.optional(ad.callbacks.report, as: .callback, network: "mars")
        }
        return nil
    }

    static func isAbsoluteURL(_ text: String) -> Bool {
        guard let url = URL(string: text), let scheme = url.scheme, !scheme.isEmpty, url.host != nil else {
            return false
        }
        return true
    }

    /// Adds `request_hash` to click and impression (and `cap_key` to spoc impressions), `placement_id` and
    /// `position` to report.
    static func enrich(_ callbacks: MozAdsCallbacks, hash: String, capKey: String?, placementID: String, position: Int)
        -> MozAdsCallbacks
    {
        var result = callbacks
        result.click = appendQuery(callbacks.click, [("request_hash", hash)])
        var impressionPairs = [("request_hash", hash)]
        if let capKey { impressionPairs.append(("cap_key", capKey)) }
        result.impression = appendQuery(callbacks.impression, impressionPairs)
        result.report = callbacks.report.map {
            appendQuery($0, [("placement_id", placementID), ("position", String(position))])
        }
        return result
    }

    /// `url` with `pairs` appended in the form encoding the reference client's `url` crate writes (spaces as `+`).
    static func appendQuery(_ url: String, _ pairs: [(String, String)]) -> String {
        url + (url.contains("?") ? "&" : "?") + QueryString.formEncode(pairs)
    }

    package static func tile(_ ad: DecodedAd) -> MozAdsTile? {
        let o = ad.object
        guard let blockKey = o["block_key"]?.string, let format = o["format"]?.string,
            let imageURL = o["image_url"]?.string,
            let name = o["name"]?.string, let url = o["url"]?.string
        else { return nil }
        return MozAdsTile(
            blockKey: blockKey, callbacks: ad.callbacks, format: format, imageUrl: imageURL, name: name, url: url)
    }

    package static func image(_ ad: DecodedAd) -> MozAdsImage? {
        let o = ad.object
        guard let blockKey = o["block_key"]?.string, let format = o["format"]?.string,
            let imageURL = o["image_url"]?.string,
            let url = o["url"]?.string
        else { return nil }
        return MozAdsImage(
            altText: o["alt_text"]?.string, blockKey: blockKey, callbacks: ad.callbacks, format: format,
            imageUrl: imageURL, url: url)
    }

    /// A `u32` field of the contract: a whole number 0…4 294 967 295, else `nil` (the spoc, or the model entry, is
    /// invalid and dropped).
    static func uint32(_ value: Double) -> UInt32? {
        guard let whole = OutsideValue.integer(value, in: 0...Int(UInt32.max)) else { return nil }
        return UInt32(exactly: whole)
    }

    package static func spoc(_ ad: DecodedAd) -> MozAdsSpoc? {
        let o = ad.object
        guard let blockKey = o["block_key"]?.string, let format = o["format"]?.string,
            let imageURL = o["image_url"]?.string,
            let url = o["url"]?.string, let title = o["title"]?.string, let domain = o["domain"]?.string,
            let excerpt = o["excerpt"]?.string, let sponsor = o["sponsor"]?.string,
            let caps = o["caps"]?.object, let capKey = caps["cap_key"]?.string,
            let day = caps["day"]?.number.flatMap(uint32),
            let ranking = o["ranking"]?.object, let priority = ranking["priority"]?.number.flatMap(uint32),
            let score = ranking["item_score"]?.number, score.isFinite
        else { return nil }
        let models = (ranking["personalization_models"]?.object ?? [:]).compactMapValues { $0.number.flatMap(uint32) }
        return MozAdsSpoc(
            blockKey: blockKey, callbacks: ad.callbacks, caps: MozAdsSpocFrequencyCaps(capKey: capKey, day: day),
            domain: domain, excerpt: excerpt, format: format, imageUrl: imageURL,
            ranking: MozAdsSpocRanking(priority: priority, personalizationModels: models, itemScore: score),
            sponsor: sponsor, sponsoredByOverride: o["sponsored_by_override"]?.string, title: title, url: url)
    }
}

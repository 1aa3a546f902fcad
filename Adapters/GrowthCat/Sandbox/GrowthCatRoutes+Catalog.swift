import AdMediation
import AdapterKit
import Foundation
import SandboxRouting

/// GrowthCat's ads: the sandbox's placements, the catalog answer and the creatives' bytes.
extension GrowthCatRoutes {
    /// One placement the sandbox serves.
    struct Placement: Sendable {
        var key: String
        var format: String  // banner | interstitial
        var creativeType: String  // image | video | app_store
        var reward: (name: String, amount: Int, minimumViewSeconds: Double)?
        var skippableAfter: Double?
        var isSkippable: Bool
        var presentation: String?  // overlay | product_view for app_store
        var durationSeconds: Double?
    }

    /// The placements, by key.
    static let placements: [String: Placement] = {
        let all = [
            Placement(key: "home_banner", format: "banner", creativeType: "image", isSkippable: false),
            Placement(
                key: "level_complete", format: "interstitial", creativeType: "image", skippableAfter: nil,
                isSkippable: true),
            Placement(
                key: "video_break", format: "interstitial", creativeType: "video", skippableAfter: 5, isSkippable: true,
                durationSeconds: 30),
            Placement(
                key: "install_offer", format: "interstitial", creativeType: "app_store", skippableAfter: 3,
                isSkippable: true, presentation: "overlay"),
            Placement(
                key: "store_page", format: "interstitial", creativeType: "app_store", skippableAfter: 3,
                isSkippable: true, presentation: "product_view"),
            Placement(
                key: "rewarded_coins", format: "interstitial", creativeType: "video",
                reward: ("Coins", 50, 15), skippableAfter: nil, isSkippable: false, durationSeconds: 30),
            // Rewarded videos around the same 15 s minimum (issue 43's reward chaos test): one shorter than it (the
            // user must stay on the end card until the minimum) and one exactly as long.
            Placement(
                key: "rewarded_short", format: "interstitial", creativeType: "video",
                reward: ("Coins", 20, 15), skippableAfter: nil, isSkippable: false, durationSeconds: 10),
            Placement(
                key: "rewarded_exact", format: "interstitial", creativeType: "video",
                reward: ("Coins", 30, 15), skippableAfter: nil, isSkippable: false, durationSeconds: 15),
        ]
        return Dictionary(uniqueKeysWithValues: all.map { ($0.key, $0) })
    }()

    /// A catalog answer, 200 whether it fills or not (an empty list of ads), written from pre-rendered templates
    /// (``JSONTemplate``): per request only the serial, the token and the price are filled in, so the route costs
    /// string appends rather than encoding a nested value. The bytes are the ones `SandboxReply.encoded` (sorted
    /// keys) writes for the same ad. The sandbox draws `growthcat/<placementKey>` once (the
    /// network's scenario for `/serve`); its latency and fault apply.
    func catalog(placements: [Placement], placementKey: String?, privacy: String, rootURL: String) -> SandboxReply {
        .drawn(placement: placementKey, privacy: privacy) { draw in
            var text = #"{"ads":["#
            if draw.fills {
                for (index, placement) in placements.prefix(placementKey == nil ? 3 : 1).enumerated() {
                    if index > 0 { text += "," }
                    ad(
                        placement, serial: draw.serial(), ecpm: draw.ecpm, withPlacement: placementKey != nil,
                        rootURL: rootURL, into: &text)
                }
            }
            text += #"],"cache_ttl_seconds":300,"media_cache_ttl_seconds":604800"#
            if let placementKey { text += #","placement_key":"# + Self.jsonString(placementKey) }
            text += "}"
            return Data(text.utf8)
        }
    }

    /// Serves one ad: a new token (kept for reward validation) with `serial`, rendered from the placement's template.
    private func ad(
        _ p: Placement, serial: Int, ecpm: Double, withPlacement: Bool, rootURL: String, into text: inout String
    ) {
        // Six random bytes (`getrandom`): `UUID()` opened /dev/urandom per call.
        let token = "tok_" + RandomID.hex(byteCount: 6)
        let template = state.withLock { m -> JSONTemplate in
            m.tokens["alloc_\(serial)"] = IssuedToken(
                token: token, minimumViewSeconds: p.reward?.minimumViewSeconds ?? 0,
                rewardName: p.reward?.name, rewardAmount: p.reward?.amount)
            let key = TemplateKey(placement: p.key, withPlacement: withPlacement, baseURL: rootURL)
            if let template = m.templates[key] { return template }
            let template = JSONTemplate(
                rendering: Self.adObject(
                    p, serial: JSONTemplate.serialHole, token: JSONTemplate.tokenHole,
                    ecpm: .string(JSONTemplate.numberHole),
                    withPlacement: withPlacement, baseURL: rootURL))
            m.templates[key] = template
            return template
        }
        template.render(serial: serial, token: token, number: ecpm, into: &text)
    }

    /// The ad object of the contract, with `serial`, `token` and `ecpm` as given (a template's holes, or values);
    /// `baseURL` is the sandbox's root URL (the creatives are under `/growthcat/assets/`).
    static func adObject(
        _ p: Placement, serial: String, token: String, ecpm: JSONValue, withPlacement: Bool, baseURL: String
    ) -> JSONValue {
        let creativeID = "cr_\(p.key)_\(serial)"
        let allocation = "alloc_\(serial)"
        let ext = p.creativeType == "video" ? "mp4" : "png"
        var creative: [String: JSONValue] = [
            "id": .string(creativeID), "creative_type": .string(p.creativeType),
            "public_asset_url": .string("\(baseURL)/growthcat/assets/\(creativeID).\(ext)"),
            "headline": .string("Sandbox \(p.key)"), "body": "A test ad",
            "cta_text": p.creativeType == "app_store" ? "Install" : "Open",
            "layout": "portrait",
            "asset_cache": [
                "cacheable": true, "ttl_seconds": 604_800, "strategy": p.creativeType == "video" ? "prefetch" : "lazy",
            ],
        ]
        if let duration = p.durationSeconds { creative["duration_seconds"] = .number(duration) }
        if let presentation = p.presentation {
            creative["store_kit"] = ["app_store_id": "1234567890", "presentation": .string(presentation)]
        }
        let skippableAfter = p.skippableAfter.map(JSONValue.number) ?? .null
        var placement: [String: JSONValue] = [
            "id": .string("pl_\(p.key)"), "key": .string(p.key), "format": .string(p.format),
            "reward_enabled": .bool(p.reward != nil), "is_skippable": .bool(p.isSkippable),
            "skippable_after_seconds": skippableAfter,
        ]
        if let reward = p.reward {
            placement["reward_name"] = .string(reward.name)
            placement["reward_amount"] = .number(Double(reward.amount))
            placement["minimum_view_seconds"] = .number(reward.minimumViewSeconds)
        }
        return [
            "placement": withPlacement ? .object(placement) : .null,
            "campaign": [
                "id": .string("cmp_\(p.key)"), "mode": "paid",
                "objective": p.creativeType == "app_store" ? "install" : "traffic", "priority_weight": 10,
            ],
            "creative": .object(creative),
            "tracking": ["allocation_id": .string(allocation), "token": .string(token)],
            "close_policy": [
                "is_skippable": .bool(p.isSkippable),
                "skippable_after_seconds": skippableAfter,
                "reward_grant_after_seconds": p.reward.map { .number($0.minimumViewSeconds) } ?? .null,
            ],
            "ecpm": ecpm,
        ]
    }

    /// A creative's bytes under `/assets/` (`path` from there): deterministic per URL, so a prefetch can be checked
    /// byte for byte, with a PNG's or an MP4's magic bytes first.
    static func asset(_ path: String) -> SandboxReply {
        var rng = SplitMix64(seed: UInt64(truncatingIfNeeded: path.utf8.reduce(5381) { ($0 &* 33) &+ Int($1) }))
        var bytes = [UInt8](repeating: 0, count: 4096)
        for i in bytes.indices { bytes[i] = UInt8(truncatingIfNeeded: rng.next()) }
        let isVideo = path.hasSuffix(".mp4")
        let magic: [UInt8] =
            isVideo ? [0, 0, 0, 0x18, 0x66, 0x74, 0x79, 0x70] : [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        bytes.replaceSubrange(0..<magic.count, with: magic)
        return .data(200, Data(bytes), contentType: isVideo ? "video/mp4" : "image/png")
    }
}

import AdapterKit
import Foundation
import Hummingbird
import NIOCore

/// GrowthCat (`specs/growthcat.md`) under `/growthcat`.
extension SandboxState {
    struct GrowthCatPlacement {
        var key: String
        var format: String  // banner | interstitial
        var creativeType: String  // image | video | app_store
        var reward: (name: String, amount: Int, minimumViewSeconds: Double)?
        var skippableAfter: Double?
        var isSkippable: Bool
        var presentation: String?  // overlay | product_view for app_store
        var durationSeconds: Double?
    }

    static let growthcatPlacements: [String: GrowthCatPlacement] = {
        let all = [
            GrowthCatPlacement(key: "home_banner", format: "banner", creativeType: "image", isSkippable: false),
            GrowthCatPlacement(
                key: "level_complete", format: "interstitial", creativeType: "image", skippableAfter: nil,
                isSkippable: true),
            GrowthCatPlacement(
                key: "video_break", format: "interstitial", creativeType: "video", skippableAfter: 5, isSkippable: true,
                durationSeconds: 30),
            GrowthCatPlacement(
                key: "install_offer", format: "interstitial", creativeType: "app_store", skippableAfter: 3,
                isSkippable: true, presentation: "overlay"),
            GrowthCatPlacement(
                key: "store_page", format: "interstitial", creativeType: "app_store", skippableAfter: 3,
                isSkippable: true, presentation: "product_view"),
            GrowthCatPlacement(
                key: "rewarded_coins", format: "interstitial", creativeType: "video",
                reward: ("Coins", 50, 15), skippableAfter: nil, isSkippable: false, durationSeconds: 30),
            // Rewarded videos around the same 15 s minimum (issue 43's reward chaos test): one shorter than it (the
            // user must stay on the end card until the minimum) and one exactly as long.
            GrowthCatPlacement(
                key: "rewarded_short", format: "interstitial", creativeType: "video",
                reward: ("Coins", 20, 15), skippableAfter: nil, isSkippable: false, durationSeconds: 10),
            GrowthCatPlacement(
                key: "rewarded_exact", format: "interstitial", creativeType: "video",
                reward: ("Coins", 30, 15), skippableAfter: nil, isSkippable: false, durationSeconds: 15),
        ]
        return Dictionary(uniqueKeysWithValues: all.map { ($0.key, $0) })
    }()

    func growthcat(_ incoming: Incoming, context: SandboxContext) async -> Response {
        let path = String(incoming.path.dropFirst("/growthcat".count))
        if path.hasPrefix("/assets/") { return growthcatAsset(path) }
        guard let auth = incoming.header("Authorization"), auth.hasPrefix("Bearer "),
            configuration.growthcatAPIKeys.contains(String(auth.dropFirst("Bearer ".count)))
        else {
            return Self.error(401, "unauthorized", "missing or unknown API key")
        }
        // The app-scoped catalog alias is the same call as the plain catalog.
        let isAppScopedCatalog = path.hasPrefix("/v1/sdk/apps/") && path.hasSuffix("/ads/catalog")
        switch (incoming.method, isAppScopedCatalog ? "/v1/ads/catalog" : path) {
        case ("GET", "/v1/sdk/config"):
            return Self.json(
                200,
                object: [
                    "app_id": "app_sandbox", "workspace": "test",
                    "ads": [
                        "ads_enabled": true, "formats": ["banner", "interstitial"], "ad_cache_ttl_seconds": 300,
                        "max_offline_ad_events": 500,
                    ],
                ])
        case ("GET", "/v1/ads/catalog"):
            guard let key = incoming.query["placement_key"], !key.isEmpty else {
                return Self.error(400, "missing_placement_key", "placement_key is required")
            }
            guard let placement = Self.growthcatPlacements[key] else {
                return Self.error(404, "invalid_placement", "unknown placement_key \(key)")
            }
            recordPrivacy(incoming.query)
            return await growthcatCatalog(placements: [placement], placementKey: key, context: context)
        case ("GET", "/v1/ads/serve"):
            guard let format = incoming.query["format"], ["banner", "interstitial"].contains(format) else {
                return Self.error(400, "invalid_format", "format must be banner or interstitial")
            }
            recordPrivacy(incoming.query)
            let matching = Self.growthcatPlacements.values.filter { $0.format == format && $0.reward == nil }.sorted {
                $0.key < $1.key
            }
            return await growthcatCatalog(placements: matching, placementKey: nil, context: context)
        case ("POST", "/v1/ads/events"):
            return growthcatEvents(incoming.body)
        case ("POST", "/v1/ads/reward/validate"):
            return await growthcatReward(incoming.body, context: context)
        default:
            return Self.error(404, "not_found", "no GrowthCat route \(incoming.method) \(path)")
        }
    }

    private static let privacyKeys = ["gdpr", "gdpr_consent", "us_privacy", "gpp", "gpp_sid", "coppa", "tfua"]

    private func recordPrivacy(_ query: [String: String]) {
        var text = ""
        for key in Self.privacyKeys {
            guard let value = query[key] else { continue }
            if !text.isEmpty { text += "&" }
            text += key + "=" + value
        }
        record { $0.adRequestPrivacy.append(text) }
    }

    /// A catalog answer, written from pre-rendered templates (``JSONTemplate``): per request only the serial, the token
    /// and the price are filled in, so the route costs string appends rather than a `JSONSerialization` of nested
    /// dictionaries. The bytes are the ones `JSONSerialization` (sorted keys) would write.
    private func growthcatCatalog(placements: [GrowthCatPlacement], placementKey: String?, context: SandboxContext)
        async -> Response
    {
        let draw = self.draw(network: "growthcat", placement: placementKey)
        var text = #"{"ads":["#
        if draw.fills {
            for (index, placement) in placements.prefix(placementKey == nil ? 3 : 1).enumerated() {
                if index > 0 { text += "," }
                growthcatAd(placement, ecpm: draw.ecpm, withPlacement: placementKey != nil, into: &text)
            }
        }
        text += #"],"cache_ttl_seconds":300,"media_cache_ttl_seconds":604800"#
        if let placementKey { text += #","placement_key":"# + Self.jsonString(placementKey) }
        text += "}"
        let body = Data(text.utf8)
        if let faulted = await applyDraw(draw, validBody: body, context: context) { return faulted }
        return Self.json(200, body)
    }

    /// `text` as a JSON string literal.
    static func jsonString(_ text: String) -> String {
        let data = JSONWriter.data([text]) ?? Data(#"[""]"#.utf8)
        return String(decoding: data.dropFirst().dropLast(), as: UTF8.self)
    }

    /// Serves one ad: a new serial and token (kept for reward validation), rendered from the placement's template.
    private func growthcatAd(_ p: GrowthCatPlacement, ecpm: Double, withPlacement: Bool, into text: inout String) {
        let serial = nextSerial()
        // Six random bytes (`getrandom`): `UUID()` opened /dev/urandom per call.
        let token = "tok_" + RandomID.hex(byteCount: 6)
        let baseURL = self.baseURL
        let template = mutable.withLock { m -> JSONTemplate in
            m.growthcatTokens["alloc_\(serial)"] = IssuedToken(
                token: token, minimumViewSeconds: p.reward?.minimumViewSeconds ?? 0,
                rewardName: p.reward?.name, rewardAmount: p.reward?.amount)
            let key = TemplateKey(placement: p.key, withPlacement: withPlacement, baseURL: baseURL)
            if let template = m.growthcatTemplates[key] { return template }
            let template = JSONTemplate(
                rendering: Self.growthcatAdObject(
                    p, serial: JSONTemplate.serialHole, token: JSONTemplate.tokenHole, ecpm: JSONTemplate.numberHole,
                    withPlacement: withPlacement, baseURL: baseURL))
            m.growthcatTemplates[key] = template
            return template
        }
        template.render(serial: serial, token: token, number: ecpm, into: &text)
    }

    /// The ad object of the contract, with `serial`, `token` and `ecpm` as given (a template's holes, or values).
    static func growthcatAdObject(
        _ p: GrowthCatPlacement, serial: String, token: String, ecpm: Any, withPlacement: Bool,
        baseURL: String
    ) -> [String: Any] {
        let creativeID = "cr_\(p.key)_\(serial)"
        let allocation = "alloc_\(serial)"
        let ext = p.creativeType == "video" ? "mp4" : "png"
        var creative: [String: Any] = [
            "id": creativeID, "creative_type": p.creativeType,
            "public_asset_url": "\(baseURL)/growthcat/assets/\(creativeID).\(ext)",
            "headline": "Sandbox \(p.key)", "body": "A test ad",
            "cta_text": p.creativeType == "app_store" ? "Install" : "Open",
            "layout": "portrait",
            "asset_cache": [
                "cacheable": true, "ttl_seconds": 604_800, "strategy": p.creativeType == "video" ? "prefetch" : "lazy",
            ],
        ]
        if let duration = p.durationSeconds { creative["duration_seconds"] = duration }
        if let presentation = p.presentation {
            creative["store_kit"] = ["app_store_id": "1234567890", "presentation": presentation]
        }
        var placement: [String: Any] = [
            "id": "pl_\(p.key)", "key": p.key, "format": p.format, "reward_enabled": p.reward != nil,
            "is_skippable": p.isSkippable, "skippable_after_seconds": p.skippableAfter.map { $0 as Any } ?? NSNull(),
        ]
        if let reward = p.reward {
            placement["reward_name"] = reward.name
            placement["reward_amount"] = reward.amount
            placement["minimum_view_seconds"] = reward.minimumViewSeconds
        }
        return [
            "placement": withPlacement ? placement : NSNull(),
            "campaign": [
                "id": "cmp_\(p.key)", "mode": "paid",
                "objective": p.creativeType == "app_store" ? "install" : "traffic", "priority_weight": 10,
            ],
            "creative": creative,
            "tracking": ["allocation_id": allocation, "token": token],
            "close_policy": [
                "is_skippable": p.isSkippable,
                "skippable_after_seconds": p.skippableAfter.map { $0 as Any } ?? NSNull(),
                "reward_grant_after_seconds": p.reward.map { $0.minimumViewSeconds as Any } ?? NSNull(),
            ],
            "ecpm": ecpm,
        ]
    }

    private func growthcatAsset(_ path: String) -> Response {
        // Deterministic bytes per URL, so a prefetch can be checked byte for byte.
        var rng = SeededGenerator(seed: UInt64(truncatingIfNeeded: path.utf8.reduce(5381) { ($0 &* 33) &+ Int($1) }))
        var bytes = [UInt8](repeating: 0, count: 4096)
        for i in bytes.indices { bytes[i] = UInt8(truncatingIfNeeded: rng.next()) }
        let isVideo = path.hasSuffix(".mp4")
        let magic: [UInt8] =
            isVideo ? [0, 0, 0, 0x18, 0x66, 0x74, 0x79, 0x70] : [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        bytes.replaceSubrange(0..<magic.count, with: magic)
        var fields = HTTPFields()
        fields[.contentType] = isVideo ? "video/mp4" : "image/png"
        return Response(status: .ok, headers: fields, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    static let growthcatEventNames: Set<String> = [
        "impression", "click", "video_start", "video_progress", "video_complete", "ad_closed", "ad_reported",
    ]

    private func growthcatEvents(_ body: Data) -> Response {
        guard let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any] else {
            return Self.error(400, "malformed_json", "the body is not a JSON object")
        }
        guard let events = object["events"] as? [[String: Any]] else {
            return Self.error(400, "invalid_events", "events must be an array of objects")
        }
        if events.isEmpty { return Self.error(400, "invalid_events", "events must not be empty") }
        if events.count > 100 {
            return Self.error(400, "batch_too_large", "a batch holds at most 100 events, got \(events.count)")
        }
        var parsed: [GrowthCatEventRecord] = []
        for (index, event) in events.enumerated() {
            guard let id = event["sdk_event_id"] as? String, !id.isEmpty else {
                return Self.error(400, "invalid_event", "events[\(index)].sdk_event_id is required")
            }
            guard let name = event["event_name"] as? String, Self.growthcatEventNames.contains(name) else {
                return Self.error(400, "invalid_event", "events[\(index)].event_name is not a known event")
            }
            let metadata = (event["metadata"] as? [String: Any])?.compactMapValues { "\($0)" } ?? [:]
            parsed.append(
                GrowthCatEventRecord(
                    sdkEventID: id, eventName: name, placementKey: event["placement_key"] as? String,
                    creativeID: event["creative_id"] as? String, metadata: metadata))
        }
        let (accepted, duplicates) = mutable.withLock { m -> (Int, Int) in
            var accepted = 0, duplicates = 0
            m.records.growthcatBatches += 1
            for event in parsed {
                if m.seenEventIDs.insert(event.sdkEventID).inserted {
                    m.records.growthcatEvents.append(event)
                    accepted += 1
                } else {
                    m.records.growthcatDuplicates += 1
                    duplicates += 1
                }
            }
            return (accepted, duplicates)
        }
        return Self.json(202, object: ["accepted": accepted, "duplicates": duplicates])
    }

    /// How many reward validations' answers are kept for their retries.
    static let rewardAnswerLimit = 10_000

    /// How many validations' fault counts are kept (``NetworkScenario/maxValidationFaults``); past it they start again.
    static let validationFaultKeyLimit = 10_000

    /// `POST /v1/ads/reward/validate`: granted once per token, for a known user and at least the minimum view time;
    /// idempotent by `sdk_event_id`. The scenario's ``NetworkScenario/validationFaults`` (for the body's
    /// `placement_key`) may answer 503, reset, lose the answer or answer late — at most
    /// ``NetworkScenario/maxValidationFaults`` times per validation.
    private func growthcatReward(_ body: Data, context: SandboxContext) async -> Response {
        guard let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any] else {
            return Self.error(400, "malformed_json", "the body is not a JSON object")
        }
        guard let allocation = object["allocation_id"] as? String, let token = object["token"] as? String else {
            return Self.error(400, "invalid_request", "allocation_id and token are required")
        }
        let user = (object["app_user_id"] as? String).flatMap { $0.isEmpty ? nil : $0 }
        let viewed = (object["viewed_seconds"] as? NSNumber)?.doubleValue ?? 0
        // Idempotent by `sdk_event_id`: a retry (the first answer lost, or late) gets the first answer again, so a
        // reward granted once is never refused to its own retry; a new id for a redeemed token is refused.
        let eventID = (object["sdk_event_id"] as? String).flatMap { $0.isEmpty || $0.utf8.count > 128 ? nil : $0 }
        let fault = validationFault(placement: object["placement_key"] as? String, key: eventID ?? "token:" + token)
        switch fault?.kind {
        case .status?:
            let status = fault.map { Fault.statuses.contains($0.status) ? $0.status : 503 } ?? 503
            return Self.error(status, "injected_fault", "injected status \(status)")
        case .reset?:
            return await Self.resetConnection(context)
        case .lostAnswer?, .lateAnswer?, nil:
            break
        }
        let (reward, replayed): ((name: String, amount: Int)?, Bool) = mutable.withLock { m in
            if let eventID, let first = m.rewardAnswers[eventID] { return (first, true) }
            var granted: (name: String, amount: Int)?
            if var issued = m.growthcatTokens[allocation], issued.token == token, !issued.redeemed,
                user != nil, viewed >= issued.minimumViewSeconds, let name = issued.rewardName,
                let amount = issued.rewardAmount
            {
                issued.redeemed = true
                m.growthcatTokens[allocation] = issued
                granted = (name, amount)
            }
            if let eventID {
                m.rewardAnswers[eventID] = .some(granted)
                m.rewardAnswerOrder.append(eventID)
                if m.rewardAnswerOrder.count > Self.rewardAnswerLimit {
                    m.rewardAnswers[m.rewardAnswerOrder.removeFirst()] = nil
                }
            }
            return (granted, false)
        }
        record {
            $0.rewardValidations.append(
                RewardValidationRecord(
                    allocationID: allocation, appUserID: user, viewedSeconds: viewed, validated: reward != nil,
                    sdkEventID: eventID, replayed: replayed, fault: fault?.kind.rawValue))
        }
        let answer: Response
        if let (name, amount) = reward {
            answer = Self.json(
                200, object: ["reward_validated": true, "accepted": 1, "reward": ["name": name, "amount": amount]])
        } else {
            answer = Self.json(200, object: ["reward_validated": false, "accepted": 0, "reward": NSNull()])
        }
        switch fault?.kind {
        case .lostAnswer?:
            return await Self.resetConnection(context)
        case .lateAnswer?:
            try? await Task.sleep(for: .milliseconds(fault?.delayMs ?? 0))
            return answer
        default:
            return answer
        }
    }

    /// Rolls the dice for one reward validation attempt: a fault of the placement's (or GrowthCat's) scenario, unless
    /// the validation `key` had its ``NetworkScenario/maxValidationFaults`` already. No draw (the seeded sequence of
    /// ad requests stays as it was) when the scenario has no validation faults. Counted in the records.
    private func validationFault(placement: String?, key: String) -> ValidationFault? {
        mutable.withLock { m -> ValidationFault? in
            let scenario = m.scenario.scenario(network: "growthcat", placement: placement)
            guard !scenario.validationFaults.isEmpty,
                m.validationFaultCounts[key, default: 0] < scenario.maxValidationFaults
            else { return nil }
            let roll = m.rng.nextUnit()
            var cumulative = 0.0
            for candidate in scenario.validationFaults {
                cumulative += candidate.rate
                guard roll < cumulative else { continue }
                if m.validationFaultCounts.count >= Self.validationFaultKeyLimit { m.validationFaultCounts = [:] }
                m.validationFaultCounts[key, default: 0] += 1
                m.records.rewardValidationFaults[candidate.kind.rawValue, default: 0] += 1
                return candidate
            }
            return nil
        }
    }

    /// Resets the request's connection (SO_LINGER 0, then close: a TCP RST) without an answer. The response returned
    /// is never written.
    static func resetConnection(_ context: SandboxContext) async -> Response {
        let channel = context.channel
        if let provider = channel as? any SocketOptionProvider {
            try? await provider.setSoLinger(linger(l_onoff: 1, l_linger: 0)).get()
        }
        try? await channel.close().get()
        return empty(500)
    }
}

import AdapterKit
import Foundation
import Hummingbird

/// MARS (`specs/mars.md`) under `/mars/v1/`.
extension SandboxState {
    static let marsPlacements: [String: String] = [
        "mock_tile_1": "tile", "mock_tile_2": "tile", "mock_tile_3": "tile",
        "mock_spoc_1": "spoc", "mock_spoc_2": "spoc",
        "mock_billboard_1": "billboard", "mock_rectangle_1": "rectangle", "mock_skyscraper_1": "skyscraper",
    ]
    static let marsTaxonomies: Set<String> = ["IAB-1.0", "IAB-2.0", "IAB-2.1", "IAB-2.2", "IAB-3.0"]

    func mars(_ incoming: Incoming, context: SandboxContext) async -> Response {
        // Paths are normalised like the real client does: `/mars/v1//delete_user` is `/mars/v1/delete_user`.
        let path = "/" + incoming.path.dropFirst("/mars/v1/".count).split(separator: "/").joined(separator: "/")
        switch (incoming.method, path) {
        case ("POST", "/ads"):
            return await marsAds(incoming, context: context)
        case ("GET", "/ads-preflight"):
            // specs/mars.md §5: 400 without a User-Agent; the answer's geo and normalised UA go into OHTTP requests.
            guard let userAgent = incoming.header("User-Agent"), !userAgent.isEmpty else {
                return Self.error(400, "invalid_request", "User-Agent is required")
            }
            return Self.json(
                200,
                object: [
                    "geoname_id": "4930956", "geo_location": "506,MA,US",
                    "normalized_ua": userAgent.hasPrefix("Mozilla/") ? "Firefox" : "Other",
                ])
        case ("GET", "/t"):
            record {
                $0.marsCallbacks.append(CallbackRecord(network: "mars", path: incoming.path, query: incoming.query))
            }
            return Self.empty(200)
        case ("DELETE", "/delete_user"):
            guard let object = try? JSONSerialization.jsonObject(with: incoming.body) as? [String: Any],
                let id = object["context_id"] as? String
            else {
                return Self.error(400, "invalid_request", "context_id is required")
            }
            record { $0.marsDeletedContextIDs.append(id) }
            return Self.empty(200)
        default:
            return Self.error(404, "not_found", "no MARS route \(incoming.method) \(incoming.path)")
        }
    }

    private func marsAds(_ incoming: Incoming, context: SandboxContext) async -> Response {
        record { $0.marsRequests.append(String(decoding: incoming.body, as: UTF8.self)) }
        guard let object = try? JSONSerialization.jsonObject(with: incoming.body) as? [String: Any] else {
            return Self.error(400, "malformed_json", "the body is not a JSON object")
        }
        guard let contextID = object["context_id"] as? String, !contextID.isEmpty else {
            return Self.error(400, "invalid_request", "context_id is required")
        }
        guard let placements = object["placements"] as? [[String: Any]] else {
            return Self.error(400, "invalid_request", "placements must be an array of objects")
        }
        if placements.isEmpty { return Self.error(400, "invalid_request", "placements must not be empty") }
        var requested: [(id: String, kind: String, count: Int)] = []
        var seen: Set<String> = []
        for (index, placement) in placements.enumerated() {
            guard let id = placement["placement"] as? String, !id.isEmpty else {
                return Self.error(400, "invalid_request", "placements[\(index)].placement is required")
            }
            guard seen.insert(id).inserted else {
                return Self.error(400, "invalid_request", "duplicate placement \(id)")
            }
            guard let count = placement["count"] as? Int, (1...20).contains(count) else {
                return Self.error(400, "invalid_request", "placements[\(index)].count must be 1…20")
            }
            if let content = placement["content"], !(content is NSNull) {
                guard let content = content as? [String: Any], let taxonomy = content["taxonomy"] as? String,
                    Self.marsTaxonomies.contains(taxonomy), content["categories"] is [String]
                else {
                    return Self.error(
                        400, "invalid_request", "placements[\(index)].content must have a known taxonomy and categories"
                    )
                }
            }
            guard let kind = Self.marsPlacements[id] else {
                return Self.error(400, "unsupported_placement", "unsupported placement \(id)")
            }
            if kind != "spoc" && count != 1 { return Self.error(400, "invalid_request", "count must be 1 for \(id)") }
            requested.append((id, kind, count))
        }
        var response: [String: Any] = [:]
        var firstDraw: Draw?
        for placement in requested {
            let draw = self.draw(network: "mars", placement: placement.id)
            if firstDraw == nil { firstDraw = draw }
            guard draw.fills else {
                response[placement.id] = [Any]()
                continue
            }
            response[placement.id] = (0..<placement.count).map {
                marsAd(kind: placement.kind, placement: placement.id, ecpm: draw.ecpm, rank: $0)
            }
        }
        let body = JSONWriter.data(response) ?? Data()
        if let draw = firstDraw, let faulted = await applyDraw(draw, validBody: body, context: context) {
            return faulted
        }
        return Self.json(200, body, headers: [("Cache-Control", "max-age=300")])
    }

    private func marsAd(kind: String, placement: String, ecpm: Double, rank: Int) -> [String: Any] {
        let serial = nextSerial()
        let id = "\(kind)_\(serial)"
        let t = "\(baseURL)/mars/v1/t"
        var ad: [String: Any] = [
            "format": kind, "url": "https://advertiser.example.com/\(id)",
            "image_url": "\(baseURL)/growthcat/assets/\(id).png",
            "block_key": "bk_\(id)",
            "callbacks": [
                "click": "\(t)?data=click-\(id)", "impression": "\(t)?data=impression-\(id)",
                "report": "\(t)?data=report-\(id)",
            ],
        ]
        switch kind {
        case "tile":
            ad["name"] = "Sandbox tile \(serial)"
        case "spoc":
            ad["title"] = "Sponsored story \(serial)"
            ad["domain"] = "example.com"
            ad["excerpt"] = "A sandbox sponsored story."
            ad["sponsor"] = "Sandbox Sponsor"
            ad["sponsored_by_override"] = NSNull()
            ad["caps"] = ["cap_key": "cap_\(placement)_\(serial)", "day": 3]
            ad["ranking"] = [
                "priority": rank + 1, "item_score": (1.0 - Double(rank) * 0.1), "personalization_models": ["m1": 1],
            ]
        default:
            ad["alt_text"] = "Sandbox \(kind)"
        }
        return ad
    }
}

import AdMediation
import Foundation
import SandboxRouting

/// MARS (`specs/mars.md`) in the demand sandbox, under `/mars/v1/`: `POST ads`, `GET ads-preflight`, `GET t` (a
/// callback) and `DELETE delete_user`. Ad requests, callbacks and deleted context ids are kept in ``records``. Listed
/// once, with the network's factory, in the registry of built-in networks (`BuiltInNetworks`), which makes one per
/// sandbox. Its OHTTP mode reaches these routes through the sandbox's own gateway (`/ohttp/`).
public struct MarsRoutes: SandboxRouteModule {
    /// What MARS received.
    public struct Records: Codable, Sendable {
        /// Ad request bodies (raw JSON), in order.
        public var requests: [String] = []
        /// Callbacks (`/v1/t`), in order.
        public var callbacks: [Callback] = []
        /// Context ids deleted through `DELETE /v1//delete_user`.
        public var deletedContextIDs: [String] = []

        /// No records.
        public init() {}
    }

    /// One callback as received.
    public struct Callback: Codable, Sendable, Hashable {
        /// The path as received (`/mars/v1/t`).
        public var path: String
        /// Query items as received (decoded).
        public var query: [String: String]
    }

    static let placements: [String: String] = [
        "mock_tile_1": "tile", "mock_tile_2": "tile", "mock_tile_3": "tile",
        "mock_spoc_1": "spoc", "mock_spoc_2": "spoc",
        "mock_billboard_1": "billboard", "mock_rectangle_1": "rectangle", "mock_skyscraper_1": "skyscraper",
    ]
    static let taxonomies: Set<String> = ["IAB-1.0", "IAB-2.0", "IAB-2.1", "IAB-2.2", "IAB-3.0"]

    /// `mars`.
    public let network = "mars"
    private let log = LockedValue(Records())

    /// Creates the module, with empty records.
    public init() {}

    /// A tile line (`mock_tile_1`), MARS's `base_url` ending in `/v1/`.
    public var sample: SandboxSample? { SandboxSample(path: "/v1/", format: "tile", placement: "mock_tile_1") }

    /// A snapshot of what MARS received so far.
    public var records: Records { log.withLock { $0 } }

    /// ``records`` as JSON.
    public func recordsJSON() -> Data? { adminJSON(records) }

    /// Forgets ``records``.
    public func resetRecords() { log.withLock { $0 = Records() } }

    /// Answers one request under `/mars`.
    public func respond(to request: SandboxRequest) -> SandboxReply {
        // Paths are normalised like the real client does: `/mars/v1//delete_user` is `/mars/v1/delete_user`.
        guard request.path.hasPrefix("/v1/") else {
            return .error(404, code: "not_found", message: "no MARS route \(request.method) /mars\(request.path)")
        }
        let path = "/" + request.path.dropFirst("/v1/".count).split(separator: "/").joined(separator: "/")
        switch (request.method, path) {
        case ("POST", "/ads"):
            return ads(request)
        case ("GET", "/ads-preflight"):
            // specs/mars.md §5: 400 without a User-Agent; the answer's geo and normalised UA go into OHTTP requests.
            guard let userAgent = request.header("User-Agent"), !userAgent.isEmpty else {
                return .error(400, code: "invalid_request", message: "User-Agent is required")
            }
            return .json(
                200,
                encoding: [
                    "geoname_id": "4930956", "geo_location": "506,MA,US",
                    "normalized_ua": userAgent.hasPrefix("Mozilla/") ? "Firefox" : "Other",
                ])
        case ("GET", "/t"):
            let callback = Callback(path: "/mars" + request.path, query: request.query)
            log.withLock { $0.callbacks.append(callback) }
            return .empty(200)
        case ("DELETE", "/delete_user"):
            guard let id = (try? JSONDecoder().decode(DeleteBody.self, from: request.body))?.context_id else {
                return .error(400, code: "invalid_request", message: "context_id is required")
            }
            log.withLock { $0.deletedContextIDs.append(id) }
            return .empty(200)
        default:
            return .error(404, code: "not_found", message: "no MARS route \(request.method) /mars\(request.path)")
        }
    }

    private func ads(_ request: SandboxRequest) -> SandboxReply {
        log.withLock { $0.requests.append(String(decoding: request.body, as: UTF8.self)) }
        guard let body = try? JSONDecoder().decode(AdsBody.self, from: request.body) else {
            return .error(400, code: "malformed_json", message: "the body is not a JSON object")
        }
        guard let contextID = body.contextID, !contextID.isEmpty else {
            return .error(400, code: "invalid_request", message: "context_id is required")
        }
        guard let placements = body.placements, placements.allSatisfy(\.isObject) else {
            return .error(400, code: "invalid_request", message: "placements must be an array of objects")
        }
        if placements.isEmpty {
            return .error(400, code: "invalid_request", message: "placements must not be empty")
        }
        var requested: [(id: String, kind: String, count: Int)] = []
        var seen: Set<String> = []
        for (index, placement) in placements.enumerated() {
            guard let id = placement.placement, !id.isEmpty else {
                return .error(400, code: "invalid_request", message: "placements[\(index)].placement is required")
            }
            guard seen.insert(id).inserted else {
                return .error(400, code: "invalid_request", message: "duplicate placement \(id)")
            }
            guard let count = placement.count, (1...20).contains(count) else {
                return .error(400, code: "invalid_request", message: "placements[\(index)].count must be 1…20")
            }
            guard placement.contentIsValid else {
                return .error(
                    400, code: "invalid_request",
                    message: "placements[\(index)].content must have a known taxonomy and categories")
            }
            guard let kind = Self.placements[id] else {
                return .error(400, code: "unsupported_placement", message: "unsupported placement \(id)")
            }
            if kind != "spoc" && count != 1 {
                return .error(400, code: "invalid_request", message: "count must be 1 for \(id)")
            }
            requested.append((id, kind, count))
        }
        let base = request.baseURL, root = request.rootURL, asked = requested
        return .ads(placements: asked.map(\.id), headers: ["Cache-Control": "max-age=300"]) { draws in
            var response: [String: [Ad]] = [:]
            for (placement, price) in zip(asked, draws.prices) {
                guard price != nil else {
                    response[placement.id] = []
                    continue
                }
                response[placement.id] = (0..<placement.count).map { rank in
                    Ad(
                        kind: placement.kind, placement: placement.id, serial: draws.serial(), rank: rank, base: base,
                        root: root)
                }
            }
            return SandboxReply.encoded(response)
        }
    }

    /// One ad of the `POST ads` answer, by format.
    private struct Ad: Encodable {
        var kind: String
        var placement: String
        var serial: Int
        var rank: Int
        var base: String
        var root: String

        struct Callbacks: Encodable {
            var click: String
            var impression: String
            var report: String
        }
        struct Caps: Encodable {
            var cap_key: String
            var day: Int
        }
        struct Ranking: Encodable {
            var priority: Int
            var item_score: Double
            var personalization_models: [String: Int]
        }
        enum Key: String, CodingKey {
            case format, url, image_url, block_key, callbacks, name, title, domain, excerpt, sponsor
            case sponsored_by_override, caps, ranking, alt_text
        }

        func encode(to encoder: any Encoder) throws {
            let id = "\(kind)_\(serial)"
            let t = "\(base)/v1/t"
            var container = encoder.container(keyedBy: Key.self)
            try container.encode(kind, forKey: .format)
            try container.encode("https://advertiser.example.com/\(id)", forKey: .url)
            try container.encode("\(root)/growthcat/assets/\(id).png", forKey: .image_url)
            try container.encode("bk_\(id)", forKey: .block_key)
            try container.encode(
                Callbacks(
                    click: "\(t)?data=click-\(id)", impression: "\(t)?data=impression-\(id)",
                    report: "\(t)?data=report-\(id)"),
                forKey: .callbacks)
            switch kind {
            case "tile":
                try container.encode("Sandbox tile \(serial)", forKey: .name)
            case "spoc":
                try container.encode("Sponsored story \(serial)", forKey: .title)
                try container.encode("example.com", forKey: .domain)
                try container.encode("A sandbox sponsored story.", forKey: .excerpt)
                try container.encode("Sandbox Sponsor", forKey: .sponsor)
                try container.encodeNil(forKey: .sponsored_by_override)
                try container.encode(Caps(cap_key: "cap_\(placement)_\(serial)", day: 3), forKey: .caps)
                try container.encode(
                    Ranking(
                        priority: rank + 1, item_score: 1.0 - Double(rank) * 0.1, personalization_models: ["m1": 1]),
                    forKey: .ranking)
            default:
                try container.encode("Sandbox \(kind)", forKey: .alt_text)
            }
        }
    }

    /// The `POST ads` body's fields the routes check. Each field is read on its own, and one of the wrong type reads as
    /// absent, so the answer names the field; a well-formed body is read without a thrown error.
    struct AdsBody: Decodable {
        var contextID: String?
        /// Nil when absent or not an array.
        var placements: [Placement]?

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: Key.self)  // not an object: malformed
            contextID = try? container.decodeIfPresent(String.self, forKey: .context_id)
            placements = try? container.decodeIfPresent([Placement].self, forKey: .placements)
        }
        enum Key: String, CodingKey { case context_id, placements }
    }

    /// One entry of `placements`.
    struct Placement: Decodable {
        var isObject = true
        var placement: String?
        var count: Int?
        /// `content` is absent, null, or an object with a known taxonomy and string categories.
        var contentIsValid = true

        init(from decoder: any Decoder) throws {
            guard let container = try? decoder.container(keyedBy: Key.self) else {
                isObject = false
                return
            }
            placement = try? container.decodeIfPresent(String.self, forKey: .placement)
            count = try? container.decodeIfPresent(Int.self, forKey: .count)
            if container.contains(.content), (try? container.decodeNil(forKey: .content)) != true {
                let content = try? container.decode(Content.self, forKey: .content)
                contentIsValid = content.map { MarsRoutes.taxonomies.contains($0.taxonomy) } ?? false
            }
        }
        enum Key: String, CodingKey { case placement, count, content }
    }

    /// A placement's `content`.
    struct Content: Decodable {
        var taxonomy: String
        var categories: [String]
    }

    /// The `DELETE delete_user` body.
    struct DeleteBody: Decodable {
        var context_id: String
    }
}

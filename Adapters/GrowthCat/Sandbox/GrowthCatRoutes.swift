import AdMediation
import AdapterKit
import Foundation
import SandboxRouting

/// GrowthCat (`specs/growthcat.md`) in the demand sandbox, under `/growthcat`: `GET /v1/sdk/config`,
/// `GET /v1/ads/catalog` (and its app-scoped alias), `GET /v1/ads/serve`, `POST /v1/ads/events`,
/// `POST /v1/ads/reward/validate`, each behind a bearer API key, and the creatives' bytes under `/assets/` (no key:
/// other networks' answers point at them too). Events and reward validations are kept in ``records``; the reward
/// tokens it issued and the answers it gave stay with the module. Listed once, with the network's factory, in the
/// registry of built-in networks (`BuiltInNetworks`), which makes one per sandbox.
public struct GrowthCatRoutes: SandboxRouteModule {
    /// What GrowthCat received.
    public struct Records: Codable, Sendable {
        /// Event batches accepted.
        public var batches: Int = 0
        /// Events, first arrival of each `sdk_event_id`, in arrival order.
        public var events: [Event] = []
        /// Events whose `sdk_event_id` had already arrived.
        public var duplicates: Int = 0
        /// Reward validations, in order (each attempt the server processed; see ``RewardValidation/replayed``).
        public var rewardValidations: [RewardValidation] = []
        /// Faults injected into reward validations, by kind (the scenario's `validation_faults` kinds).
        public var rewardValidationFaults: [String: Int] = [:]

        /// No records.
        public init() {}
    }

    /// One event as received.
    public struct Event: Sendable, Codable, Hashable {
        /// The client's id for the event.
        public var sdkEventID: String
        /// The event name.
        public var eventName: String
        /// The placement key.
        public var placementKey: String?
        /// The creative id.
        public var creativeID: String?
        /// String metadata (`progress_pct`).
        public var metadata: [String: String]
    }

    /// One reward validation as received, and the answer.
    public struct RewardValidation: Sendable, Codable, Hashable {
        /// The allocation id sent.
        public var allocationID: String
        /// The user id sent, if any.
        public var appUserID: String?
        /// Seconds viewed.
        public var viewedSeconds: Double
        /// Whether the reward was granted.
        public var validated: Bool
        /// The validation's `sdk_event_id`, if it carried one.
        public var sdkEventID: String? = nil
        /// Whether this was a repeated `sdk_event_id` answered with its first answer (nothing was redeemed again).
        public var replayed = false
        /// The fault injected into this attempt's answer after it was processed (`lost_answer`, `late_answer`), if
        /// any.
        public var fault: String? = nil
    }

    /// A reward token issued with an ad, until it is redeemed.
    struct IssuedToken: Sendable {
        var token: String
        var minimumViewSeconds: Double
        var rewardName: String?
        var rewardAmount: Int?
        var redeemed = false
    }

    /// What a pre-rendered ad depends on.
    struct TemplateKey: Hashable, Sendable {
        var placement: String
        var withPlacement: Bool
        var baseURL: String
    }

    /// Everything the module keeps, behind one lock.
    struct State {
        var records = Records()
        var seenEventIDs: Set<String> = []
        var tokens: [String: IssuedToken] = [:]
        /// Pre-rendered ads by placement, placement flag and root URL.
        var templates: [TemplateKey: JSONTemplate] = [:]
        /// The answer given to each reward validation's `sdk_event_id` (the reward granted, or nil), so a retry gets
        /// the first answer again; the oldest forgotten beyond ``rewardAnswerLimit``.
        var rewardAnswers: [String: (name: String, amount: Int)?] = [:]
        var rewardAnswerOrder: [String] = []
    }

    /// `growthcat`.
    public let network = "growthcat"
    /// The accepted API keys (`Authorization: Bearer <key>`).
    public let apiKeys: Set<String>
    let state = LockedValue(State())

    /// Creates the module, with empty records, accepting `apiKeys` (default `gc_test_demo`). A sandbox serves one
    /// with other keys when it is in its configuration's `routeModules` (which replaces the registry's).
    public init(apiKeys: Set<String> = ["gc_test_demo"]) {
        self.apiKeys = apiKeys
    }

    /// An interstitial line, `level_complete`, with the first of ``apiKeys`` (in order) and the catalog cache off (so
    /// each load asks the sandbox); nil when the module accepts no key.
    public var sample: SandboxSample? {
        guard let key = apiKeys.min() else { return nil }
        return SandboxSample(
            settings: ["api_key": key, "catalog_cache": "false"], format: "interstitial", placement: "level_complete")
    }

    /// A snapshot of what GrowthCat received so far.
    public var records: Records { state.withLock { $0.records } }

    /// ``records`` as JSON.
    public func recordsJSON() -> Data? { adminJSON(records) }

    /// Forgets ``records`` (and which event ids arrived); issued tokens and reward answers stay.
    public func resetRecords() {
        state.withLock {
            $0.records = Records()
            $0.seenEventIDs = []
        }
    }

    /// Answers one request under `/growthcat`.
    public func respond(to request: SandboxRequest) -> SandboxReply {
        let path = request.path
        guard path.hasPrefix("/") else {
            // `/growthcat` itself: the sandbox's own "no route", as before the routes were a module.
            let whole = request.target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first
            return Self.error(404, "not_found", "no route for \(request.method) \(whole.map(String.init) ?? "")")
        }
        if path.hasPrefix("/assets/") { return Self.asset(path) }
        guard let auth = request.header("Authorization"), auth.hasPrefix("Bearer "),
            apiKeys.contains(String(auth.dropFirst("Bearer ".count)))
        else {
            return Self.error(401, "unauthorized", "missing or unknown API key")
        }
        // The app-scoped catalog alias is the same call as the plain catalog.
        let isAppScopedCatalog = path.hasPrefix("/v1/sdk/apps/") && path.hasSuffix("/ads/catalog")
        switch (request.method, isAppScopedCatalog ? "/v1/ads/catalog" : path) {
        case ("GET", "/v1/sdk/config"):
            return Self.json(
                200,
                [
                    "app_id": "app_sandbox", "workspace": "test",
                    "ads": [
                        "ads_enabled": true, "formats": ["banner", "interstitial"], "ad_cache_ttl_seconds": 300,
                        "max_offline_ad_events": 500,
                    ],
                ])
        case ("GET", "/v1/ads/catalog"):
            guard let key = request.query["placement_key"], !key.isEmpty else {
                return Self.error(400, "missing_placement_key", "placement_key is required")
            }
            guard let placement = Self.placements[key] else {
                return Self.error(404, "invalid_placement", "unknown placement_key \(key)")
            }
            return catalog(
                placements: [placement], placementKey: key, privacy: Self.privacy(request.query),
                rootURL: request.rootURL)
        case ("GET", "/v1/ads/serve"):
            guard let format = request.query["format"], ["banner", "interstitial"].contains(format) else {
                return Self.error(400, "invalid_format", "format must be banner or interstitial")
            }
            let matching = Self.placements.values.filter { $0.format == format && $0.reward == nil }.sorted {
                $0.key < $1.key
            }
            return catalog(
                placements: matching, placementKey: nil, privacy: Self.privacy(request.query), rootURL: request.rootURL)
        case ("POST", "/v1/ads/events"):
            return events(request.body)
        case ("POST", "/v1/ads/reward/validate"):
            return reward(request.body)
        default:
            return Self.error(404, "not_found", "no GrowthCat route \(request.method) \(path)")
        }
    }

    private static let privacyKeys = ["gdpr", "gdpr_consent", "us_privacy", "gpp", "gpp_sid", "coppa", "tfua"]

    /// The request's privacy fields as received (`gdpr=1&us_privacy=1YNN`; empty when it has none), for the
    /// sandbox's records.
    static func privacy(_ query: [String: String]) -> String {
        var text = ""
        for key in privacyKeys {
            guard let value = query[key] else { continue }
            if !text.isEmpty { text += "&" }
            text += key + "=" + value
        }
        return text
    }

    // MARK: Answers

    /// A JSON answer with `value` (keys sorted, slashes not escaped).
    static func json(_ status: Int, _ value: JSONValue) -> SandboxReply {
        .json(status, encoding: value)
    }

    /// The error answer of the contract, `{"error": {"code": …, "message": …}}`.
    static func error(_ status: Int, _ code: String, _ message: String) -> SandboxReply {
        .error(status, code: code, message: message)
    }

    /// `text` as a JSON string literal.
    static func jsonString(_ text: String) -> String {
        String(decoding: SandboxReply.encoded([JSONValue.string(text)]).dropFirst().dropLast(), as: UTF8.self)
    }
}

import AdMediation
import Foundation

/// The MARS environment.
public enum MozAdsEnvironment: Sendable, Hashable {
    /// `https://ads.mozilla.org/v1/`.
    case prod
    /// `https://ads.allizom.org/v1/`.
    case staging
    /// A test or custom server (the demand sandbox, a mock). Plain http is allowed for loopback hosts only.
    case custom(baseURL: String)

    /// The base URL, ending in `/v1/`-style slash.
    public var baseURL: String {
        switch self {
        case .prod: "https://ads.mozilla.org/v1/"
        case .staging: "https://ads.allizom.org/v1/"
        case .custom(let url): url.hasSuffix("/") ? url : url + "/"
        }
    }

    /// `base` joined with `path` as URL path segments (the core's join; leading, trailing and doubled slashes in
    /// `path` are normalised).
    public func url(_ path: String) -> String {
        HTTPRequest.url(baseURL, appending: "/" + path.split(separator: "/").joined(separator: "/"))
    }

    var hashName: String {
        switch self {
        case .prod: "prod"
        case .staging: "staging"
        case .custom(let url): "custom:\(url)"
        }
    }
}

/// IAB content taxonomy versions.
public enum MozAdsIABContentTaxonomy: String, Sendable, Hashable, CaseIterable {
    /// IAB-1.0.
    case iab1_0 = "IAB-1.0"
    /// IAB-2.0.
    case iab2_0 = "IAB-2.0"
    /// IAB-2.1.
    case iab2_1 = "IAB-2.1"
    /// IAB-2.2.
    case iab2_2 = "IAB-2.2"
    /// IAB-3.0.
    case iab3_0 = "IAB-3.0"
}

/// IAB content classification of a placement.
public struct MozAdsIABContent: Sendable, Hashable {
    /// The taxonomy version.
    public var taxonomy: MozAdsIABContentTaxonomy
    /// Category ids.
    public var categoryIds: [String]
    /// Creates content.
    public init(taxonomy: MozAdsIABContentTaxonomy, categoryIds: [String]) {
        self.taxonomy = taxonomy
        self.categoryIds = categoryIds
    }
}

/// A tile or image placement to request.
public struct MozAdsPlacementRequest: Sendable, Hashable {
    /// The placement id (unique within one call).
    public var placementId: String
    /// Optional IAB content.
    public var iabContent: MozAdsIABContent?
    /// Creates a placement request.
    public init(placementId: String, iabContent: MozAdsIABContent? = nil) {
        self.placementId = placementId
        self.iabContent = iabContent
    }
}

/// A spoc placement to request, with a count.
public struct MozAdsPlacementRequestWithCount: Sendable, Hashable {
    /// How many spocs.
    public var count: UInt32
    /// The placement id (unique within one call).
    public var placementId: String
    /// Optional IAB content.
    public var iabContent: MozAdsIABContent?
    /// Creates a placement request.
    public init(count: UInt32, placementId: String, iabContent: MozAdsIABContent? = nil) {
        self.count = count
        self.placementId = placementId
        self.iabContent = iabContent
    }
}

/// How a request uses the cache.
public enum MozAdsCacheMode: Sendable, Hashable {
    /// Use a stored response when there is one; otherwise fetch and store.
    case cacheFirst
    /// Always fetch, then store.
    case networkFirst
}

/// Per-request cache policy.
public struct MozAdsRequestCachePolicy: Sendable, Hashable {
    /// The mode.
    public var mode: MozAdsCacheMode
    /// TTL override in seconds; 0 disables storing for this request.
    public var ttlSeconds: UInt64?
    /// Creates a policy.
    public init(mode: MozAdsCacheMode, ttlSeconds: UInt64? = nil) {
        self.mode = mode
        self.ttlSeconds = ttlSeconds
    }
}

/// Options of one ad request.
public struct MozAdsRequestOptions: Sendable, Hashable {
    /// The cache policy; nil means cacheFirst with the client's default TTL.
    public var cachePolicy: MozAdsRequestCachePolicy?
    /// Flags passed through to MARS (`contextual_placement`, …).
    public var flags: [String: Bool]
    /// Route through OHTTP (the builder's `ohttp(relayURL:keyConfigurationURL:)`); without a relay,
    /// `ohttpNotConfigured`.
    public var ohttp: Bool
    /// Creates options.
    public init(cachePolicy: MozAdsRequestCachePolicy? = nil, flags: [String: Bool] = [:], ohttp: Bool = false) {
        self.cachePolicy = cachePolicy
        self.flags = flags
        self.ohttp = ohttp
    }
}

/// Options of a callback.
public struct MozAdsCallbackOptions: Sendable, Hashable {
    /// Route through OHTTP (the builder's relay); without one, `ohttpNotConfigured`.
    public var ohttp: Bool
    /// Creates options.
    public init(ohttp: Bool = false) { self.ohttp = ohttp }
}

/// Why the user reported an ad.
public enum MozAdsReportReason: String, Sendable, Hashable, CaseIterable {
    /// Inappropriate.
    case inappropriate
    /// Not interesting to the user.
    case notInterested = "not_interested"
    /// Shown too often.
    case seenTooManyTimes = "seen_too_many_times"
}

/// Callback URLs of an ad (already enriched by the client).
public struct MozAdsCallbacks: Sendable, Hashable {
    /// Click URL.
    public var click: String
    /// Impression URL.
    public var impression: String
    /// Report URL, if any.
    public var report: String?
}

/// A tile ad.
public struct MozAdsTile: Sendable, Hashable {
    /// Block key.
    public var blockKey: String
    /// Callbacks.
    public var callbacks: MozAdsCallbacks
    /// Format (`tile`).
    public var format: String
    /// Image URL.
    public var imageUrl: String
    /// Name.
    public var name: String
    /// Destination URL.
    public var url: String
}

/// An image ad.
public struct MozAdsImage: Sendable, Hashable {
    /// Alt text.
    public var altText: String?
    /// Block key.
    public var blockKey: String
    /// Callbacks.
    public var callbacks: MozAdsCallbacks
    /// Format (`billboard`, `skyscraper`, …).
    public var format: String
    /// Image URL.
    public var imageUrl: String
    /// Destination URL.
    public var url: String
}

/// Frequency caps of a spoc.
public struct MozAdsSpocFrequencyCaps: Sendable, Hashable {
    /// Cap key.
    public var capKey: String
    /// Day.
    public var day: UInt32
}

/// Ranking of a spoc.
public struct MozAdsSpocRanking: Sendable, Hashable {
    /// Priority.
    public var priority: UInt32
    /// Personalization model scores (empty when absent).
    public var personalizationModels: [String: UInt32]
    /// Item score.
    public var itemScore: Double
}

/// A sponsored story.
public struct MozAdsSpoc: Sendable, Hashable {
    /// Block key.
    public var blockKey: String
    /// Callbacks.
    public var callbacks: MozAdsCallbacks
    /// Caps.
    public var caps: MozAdsSpocFrequencyCaps
    /// Domain.
    public var domain: String
    /// Excerpt.
    public var excerpt: String
    /// Format (`spoc`).
    public var format: String
    /// Image URL.
    public var imageUrl: String
    /// Ranking.
    public var ranking: MozAdsSpocRanking
    /// Sponsor.
    public var sponsor: String
    /// Sponsor override.
    public var sponsoredByOverride: String?
    /// Title.
    public var title: String
    /// Destination URL.
    public var url: String
}

/// The on-disk cache settings.
public struct MozAdsCacheConfig: Sendable, Hashable {
    /// SQLite file path (must not be blank).
    public var dbPath: String
    /// Default TTL (1 s … 7 days). Default 300.
    public var defaultCacheTtlSeconds: UInt64?
    /// Size limit (1 … 100 MiB). Default 10.
    public var maxSizeMib: UInt64?
    /// Creates a cache configuration.
    public init(dbPath: String, defaultCacheTtlSeconds: UInt64? = nil, maxSizeMib: UInt64? = nil) {
        self.dbPath = dbPath
        self.defaultCacheTtlSeconds = defaultCacheTtlSeconds
        self.maxSizeMib = maxSizeMib
    }
}

/// Telemetry sink with the upstream client's labels. Every method has a no-op default.
public protocol MozAdsTelemetry: Sendable {
    /// The cache could not be built (`empty_db_path`, `database_error`, `invalid_max_size`, `invalid_ttl`).
    func recordBuildCacheError(label: String, value: String)
    /// An operation failed (`request_ads`, `record_click`, `record_impression`, `report_ad`).
    func recordClientError(label: String, value: String)
    /// An operation succeeded (`new`, `request_ads`, `record_click`, `record_impression`, `report_ad`).
    func recordClientOperationTotal(label: String)
    /// An ad item could not be decoded (`invalid_ad_item`).
    func recordDeserializationError(label: String, value: String)
    /// A cache outcome (`hit`, `lookup_failed`, `no_cache`, `miss_not_cacheable`, `miss_stored`, `store_failed`,
    /// `trim_failed`, `cleanup_failed`).
    func recordHttpCacheOutcome(label: String, value: String)
}

extension MozAdsTelemetry {
    /// Does nothing.
    public func recordBuildCacheError(label: String, value: String) {}
    /// Does nothing.
    public func recordClientError(label: String, value: String) {}
    /// Does nothing.
    public func recordClientOperationTotal(label: String) {}
    /// Does nothing.
    public func recordDeserializationError(label: String, value: String) {}
    /// Does nothing.
    public func recordHttpCacheOutcome(label: String, value: String) {}
}

/// Telemetry that records nothing.
public struct NoOpMozAdsTelemetry: MozAdsTelemetry {
    /// Creates it.
    public init() {}
}

/// Supplies the context id sent with ad requests.
public protocol MozAdsContextIDProvider: Sendable {
    /// The id to send now.
    func contextID() async -> String
}

extension AdError.Reason {
    /// The request could not be built (empty or duplicate placements): code ``AdError/Code/configuration``.
    public static let marsBuildRequest = AdError.Reason(domain: "mars", name: "build_request")
    /// MARS answered 400; the message holds the body.
    public static let marsBadRequest = AdError.Reason(domain: "mars", name: "bad_request")
    /// MARS answered 5xx; the message holds the body.
    public static let marsServer = AdError.Reason(domain: "mars", name: "server")
    /// MARS answered another status but 200 (401, 403, 429, …); the message holds the body.
    public static let marsUnexpectedStatus = AdError.Reason(domain: "mars", name: "unexpected_status")
    /// The transport failed with `code` (`mars.transport_connection_refused`).
    public static func marsTransport(_ code: HTTPClientError.Code) -> AdError.Reason {
        AdError.Reason(domain: "mars", name: "transport_\(code.rawValue)")
    }
    /// The body is not a JSON object, or breaks a limit.
    public static let marsJSON = AdError.Reason(domain: "mars", name: "json")
    /// A callback URL is not a valid absolute URL.
    public static let marsInvalidCallbackURL = AdError.Reason(domain: "mars", name: "invalid_callback_url")
    /// OHTTP was requested but no relay is configured.
    public static let marsOHTTPNotConfigured = AdError.Reason(domain: "mars", name: "ohttp_not_configured")
    /// The cache could not be cleared.
    public static let marsCache = AdError.Reason(domain: "mars", name: "cache")
}

/// The MARS client's failures, as the seed's `MozAdsClientApiError` names them; each becomes an ``AdError`` with its
/// code, a ``AdError/Reason`` and the seed's message (`Bad request (400): <body>`; a request that cannot be built keeps
/// the seed's own sentence).
enum MarsFailure {
    case buildRequest, badRequest, json, invalidCallbackURL, ohttpNotConfigured, cache
    case server(status: Int)
    case unexpected(status: Int)
    case transport(HTTPClientError.Code)
}

extension AdError {
    /// The error for a MARS client failure.
    static func mars(code: MarsFailure, message: String) -> AdError {
        switch code {
        case .badRequest: AdError(.badRequest, "Bad request (400): \(message)", reason: .marsBadRequest)
        case .server(let status):
            AdError(.server(status: status), "Server error (\(status)): \(message)", reason: .marsServer)
        case .unexpected(let status):
            AdError(
                AdError.http(status: status, message: "").code, "Unexpected response (\(status)): \(message)",
                reason: .marsUnexpectedStatus)
        case .buildRequest:
            AdError(.configuration, message, reason: .marsBuildRequest)
        case .transport(let kind):
            AdError(
                AdError(HTTPClientError(kind, "")).code, "Request failed (\(kind.rawValue)): \(message)",
                reason: .marsTransport(kind))
        case .json: AdError(.invalidResponse, "JSON error: \(message)", reason: .marsJSON)
        case .invalidCallbackURL:
            AdError(.configuration, "Invalid callback URL: \(message)", reason: .marsInvalidCallbackURL)
        case .ohttpNotConfigured:
            AdError(.unsupported, "OHTTP relay not configured: \(message)", reason: .marsOHTTPNotConfigured)
        case .cache: AdError(.storage, "Failed to clear cache: \(message)", reason: .marsCache)
        }
    }
}

import AdMediation
import AdTransport
import Foundation

// The request side of the MARS API: environments, placements, IAB content, cache modes and options.

/// The MARS environment.
public enum MozAdsEnvironment: Sendable, Hashable {
    /// `https://ads.mozilla.org/v1/`.
    case prod
    /// `https://ads.allizom.org/v1/`.
    case staging
    /// The seed's third environment ("Prod, Staging, or Test"): a local mock MARS at `http://127.0.0.1:1234/`.
    /// Neither the seed nor the spec gives it a URL; upstream's `Test` is its mock server's address (mockito 0.31,
    /// `127.0.0.1:1234`, no `/v1/`), so that is the one used here. A mock or sandbox elsewhere is
    /// ``custom(baseURL:)``.
    case test
    /// A test or custom server (the demand sandbox, a mock). Plain http is allowed for loopback hosts only.
    case custom(baseURL: String)

    /// The base URL of ``test``.
    public static let testBaseURL = "http://127.0.0.1:1234/"

    /// The base URL, ending in `/v1/`-style slash.
    public var baseURL: String {
        switch self {
        case .prod: "https://ads.mozilla.org/v1/"
        case .staging: "https://ads.allizom.org/v1/"
        case .test: Self.testBaseURL
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
        case .test: "test"
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
    /// TTL override in seconds; nil uses the client default. The seed: "`0` disables caching for this request" — it is
    /// neither answered from the cache nor stored (an entry already there stays for other requests).
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

import Foundation

/// What the sandbox received, for assertions. A snapshot: take a new one to see later arrivals.
public struct SandboxRecords: Sendable, Codable {
    /// Requests per route (`"POST /growthcat/v1/ads/events"`), query excluded.
    public var requestCounts: [String: Int] = [:]
    /// Chartboost-style and app-open tracking hits.
    public var trackingHits: [CallbackRecord] = []
    /// Every ad request's query or body privacy fields, as received (for privacy assertions).
    public var adRequestPrivacy: [String] = []
    /// What the OHTTP relay received and forwarded, in order: only the encapsulated bytes (it never decrypts).
    public var ohttpRelayed: [OHTTPRelayRecord] = []
    /// What the OHTTP gateway decrypted, in order, for comparison with what the relay saw.
    public var ohttpGatewayRequests: [OHTTPGatewayRecord] = []

    /// Requests to routes whose key contains `fragment`.
    public func count(_ fragment: String) -> Int {
        requestCounts.filter { $0.key.contains(fragment) }.values.reduce(0, +)
    }
}

/// A callback or tracking GET.
public struct CallbackRecord: Sendable, Codable, Hashable {
    /// The route module's network (`chartboost`, `appopen`, …).
    public var network: String
    /// The path as received.
    public var path: String
    /// Query items as received (decoded).
    public var query: [String: String]
}

/// One request as the OHTTP relay saw it.
public struct OHTTPRelayRecord: Sendable, Codable, Hashable {
    /// Its content type.
    public var contentType: String?
    /// Its body, exactly as received (an encapsulated request).
    public var body: Data
    /// The status the relay answered.
    public var status: Int
}

/// One request as the OHTTP gateway decrypted it.
public struct OHTTPGatewayRecord: Sendable, Codable, Hashable {
    /// The method.
    public var method: String
    /// The path, without the query.
    public var path: String
    /// Its header fields (names lower-case).
    public var headers: [String: String]
}

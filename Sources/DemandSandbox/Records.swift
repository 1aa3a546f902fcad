import Foundation

/// What the sandbox received, for assertions. A snapshot: take a new one to see later arrivals.
public struct SandboxRecords: Sendable, Codable {
    /// Requests per route (`"POST /growthcat/v1/ads/events"`), query excluded.
    public var requestCounts: [String: Int] = [:]
    /// GrowthCat event batches accepted.
    public var growthcatBatches: Int = 0
    /// GrowthCat events, first arrival of each `sdk_event_id`, in arrival order.
    public var growthcatEvents: [GrowthCatEventRecord] = []
    /// GrowthCat events whose `sdk_event_id` had already arrived.
    public var growthcatDuplicates: Int = 0
    /// GrowthCat reward validations, in order (each attempt the server processed; see
    /// ``RewardValidationRecord/replayed``).
    public var rewardValidations: [RewardValidationRecord] = []
    /// Faults injected into GrowthCat reward validations, by kind (``ValidationFault/Kind`` raw values).
    public var rewardValidationFaults: [String: Int] = [:]
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

/// One GrowthCat event as received.
public struct GrowthCatEventRecord: Sendable, Codable, Hashable {
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
public struct RewardValidationRecord: Sendable, Codable, Hashable {
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
    /// The fault injected into this attempt's answer after it was processed (`lost_answer`, `late_answer`), if any.
    public var fault: String? = nil
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

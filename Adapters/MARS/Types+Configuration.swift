import AdMediation
import Foundation

// The client's cache configuration, telemetry and context-id provider.

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

import AdStorage
import Foundation

/// The cache policy over ``HTTPCacheStore``: configuration validation, TTL resolution, size limit.
final class MarsHTTPCache: Sendable {
    struct BuildFailure: Error {
        var label: String
        var message: String
    }

    static let maxTTL: Int64 = 7 * 24 * 3600
    let store: HTTPCacheStore
    let defaultTTL: Int64
    let maxBytes: Int64

    private init(store: HTTPCacheStore, defaultTTL: Int64, maxBytes: Int64) {
        self.store = store
        self.defaultTTL = defaultTTL
        self.maxBytes = maxBytes
    }

    /// Validates the configuration (blank path, TTL 1 s…7 days, size 1…100 MiB) and opens the store.
    static func make(_ config: MozAdsCacheConfig) -> Result<MarsHTTPCache, BuildFailure> {
        if config.dbPath.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
            return .failure(BuildFailure(label: "empty_db_path", message: "dbPath must not be blank"))
        }
        let ttl = config.defaultCacheTtlSeconds ?? 300
        guard ttl >= 1 && ttl <= UInt64(maxTTL) else {
            return .failure(
                BuildFailure(label: "invalid_ttl", message: "defaultCacheTtlSeconds must be 1…\(maxTTL), got \(ttl)"))
        }
        let mib = config.maxSizeMib ?? 10
        guard mib >= 1 && mib <= 100 else {
            return .failure(BuildFailure(label: "invalid_max_size", message: "maxSizeMib must be 1…100, got \(mib)"))
        }
        do {
            let store = try HTTPCacheStore(path: config.dbPath)
            return .success(MarsHTTPCache(store: store, defaultTTL: Int64(ttl), maxBytes: Int64(mib) << 20))
        } catch {
            return .failure(BuildFailure(label: "database_error", message: error.description))
        }
    }

    /// The project's TTL rule (the seed's): the minimum of the values present — server max-age, the client default,
    /// the per-request TTL — capped at 7 days. 0 means "do not store".
    func effectiveTTL(serverMaxAge: Int64?, requestTTL: UInt64?) -> Int64 {
        var ttl = defaultTTL
        if let serverMaxAge { ttl = min(ttl, serverMaxAge) }
        if let requestTTL { ttl = min(ttl, Int64(clamping: requestTTL)) }
        return min(ttl, Self.maxTTL)
    }

    /// Deletes the expired rows.
    func cleanup(now: Int64) async throws(StorageError) {
        _ = try await store.deleteExpired(now: now)
    }

    func lookup(hash: String) async -> Result<CachedHTTPResponse?, StorageError> {
        do { return .success(try await store.lookup(hash: hash)) } catch { return .failure(error) }
    }

    /// Stores one answer for `ttl` seconds.
    func store(hash: String, url: String, status: Int, body: Data, headers: [String: String], ttl: Int64, now: Int64)
        async throws(StorageError)
    {
        try await store.store(
            hash: hash, method: "POST", url: url, status: status, headers: headers, body: body, ttlSeconds: ttl,
            now: now)
    }

    /// Trims to the size limit: the number of rows evicted, or the failure.
    func trim() async -> Result<Int, StorageError> {
        do { return .success(try await store.trim(maxBytes: maxBytes)) } catch { return .failure(error) }
    }

    /// Deletes every row.
    func clear() async throws(StorageError) {
        _ = try await store.clear()
    }
}

import AdMediation
import AdStorage
import Foundation
import Synchronization

/// The cache policy over ``HTTPCacheStore``: configuration validation, TTL resolution, size limit. The store's file is
/// opened by the first use, off the cooperative pool — never by the builder — so building a client costs no disk I/O.
/// A file that cannot be opened is reported once (`database_error`, as a build failure would be) and the cache then
/// behaves as absent: every lookup misses and nothing is stored.
final class MarsHTTPCache: Sendable {
    struct BuildFailure: Error {
        var label: String
        var message: String
    }

    static let maxTTL: Int64 = 7 * 24 * 3600
    let path: String
    let defaultTTL: Int64
    let maxBytes: Int64
    /// Called once when the file cannot be opened (the builder reports it to telemetry).
    private let onOpenFailure: @Sendable (BuildFailure) -> Void
    /// The opened store; nil until the first use opens it (or when it could not be opened: see `unusable`).
    private let opened = LockedValue<HTTPCacheStore?>(nil)
    /// Held, on a Dispatch thread only, while the file is opened, so concurrent first uses open it once.
    private let opening = LockedValue<Void>(())
    private let unusable = Atomic<Bool>(false)

    private init(
        path: String, defaultTTL: Int64, maxBytes: Int64, onOpenFailure: @escaping @Sendable (BuildFailure) -> Void
    ) {
        self.path = path
        self.defaultTTL = defaultTTL
        self.maxBytes = maxBytes
        self.onOpenFailure = onOpenFailure
    }

    /// Validates the configuration (blank path, TTL 1 s…7 days, size 1…100 MiB); opens nothing.
    static func make(
        _ config: MozAdsCacheConfig, onOpenFailure: @escaping @Sendable (BuildFailure) -> Void = { _ in }
    ) -> Result<MarsHTTPCache, BuildFailure> {
        // Checked without Foundation: its first use in a process (CharacterSet) costs ~0.3 ms at launch.
        if config.dbPath.allSatisfy(\.isWhitespace) {
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
        return .success(
            MarsHTTPCache(
                path: config.dbPath, defaultTTL: Int64(ttl), maxBytes: Int64(mib) << 20, onOpenFailure: onOpenFailure))
    }

    /// False once the file could not be opened (the cache then behaves as absent).
    var isUsable: Bool { !unusable.load(ordering: .relaxed) }

    /// The store, opened once on first use on a Dispatch thread; nil when the file cannot be opened.
    private func openedStore() async -> HTTPCacheStore? {
        if let store = opened.withLock({ $0 }) { return store }
        if unusable.load(ordering: .relaxed) { return nil }
        return await offCooperativePool { [self] in openOnce() }
    }

    /// Opens the file unless another first use already did (or failed to); runs on a Dispatch thread.
    private func openOnce() -> HTTPCacheStore? {
        opening.withLock { _ -> HTTPCacheStore? in
            if let store = opened.withLock({ $0 }) { return store }
            if unusable.load(ordering: .relaxed) { return nil }
            do throws(StorageError) {
                let store = try HTTPCacheStore(path: path)
                opened.withLock { $0 = store }
                return store
            } catch {
                unusable.store(true, ordering: .relaxed)
                onOpenFailure(BuildFailure(label: "database_error", message: error.description))
                return nil
            }
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
        guard let store = await openedStore() else { return }
        _ = try await store.deleteExpired(now: now)
    }

    func lookup(hash: String) async -> Result<CachedHTTPResponse?, StorageError> {
        guard let store = await openedStore() else { return .success(nil) }
        do { return .success(try await store.lookup(hash: hash)) } catch { return .failure(error) }
    }

    /// Stores one answer for `ttl` seconds.
    func store(hash: String, url: String, status: Int, body: Data, headers: [String: String], ttl: Int64, now: Int64)
        async throws(StorageError)
    {
        guard let store = await openedStore() else { return }
        try await store.store(
            hash: hash, method: "POST", url: url, status: status, headers: headers, body: body, ttlSeconds: ttl,
            now: now)
    }

    /// Trims to the size limit: the number of rows evicted, or the failure.
    func trim() async -> Result<Int, StorageError> {
        guard let store = await openedStore() else { return .success(0) }
        do { return .success(try await store.trim(maxBytes: maxBytes)) } catch { return .failure(error) }
    }

    /// Deletes every row.
    func clear() async throws(StorageError) {
        guard let store = await openedStore() else { return }
        _ = try await store.clear()
    }
}

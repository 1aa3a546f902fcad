import Foundation
import GRDB

/// A cached HTTP response.
public struct CachedHTTPResponse: Sendable, Hashable {
    /// The status code.
    public var status: Int
    /// Response headers (name → value).
    public var headers: [String: String]
    /// The body.
    public var body: Data
    /// When it was stored (Unix seconds).
    public var cachedAt: Int64
    /// When it expires (Unix seconds).
    public var expiresAt: Int64
    /// The TTL it was stored with.
    public var ttlSeconds: Int64
}

/// A failure of the storage layer.
public struct StorageError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What failed, as a short label.
    public var operation: String
    /// Details.
    public var message: String
    /// `"store: disk I/O error"`.
    public var description: String { "\(operation): \(message)" }
    /// Another connection held the database's lock for longer than the busy timeout (`SQLITE_BUSY`/`SQLITE_LOCKED`):
    /// contention, not corruption.
    package var isContention = false

    init(_ operation: String, _ error: any Error) {
        self.operation = operation
        self.message = "\(error)"
        if let error = error as? DatabaseError {
            isContention = error.resultCode == .SQLITE_BUSY || error.resultCode == .SQLITE_LOCKED
        }
    }

    init(_ operation: String, message: String) {
        self.operation = operation
        self.message = message
    }
}

/// The SQLite HTTP cache (GRDB, WAL): rows keyed by a request hash, with expiry, size accounting and
/// oldest-first trimming. Policy (what to store, for how long) belongs to the caller.
public final class HTTPCacheStore: Sendable {
    private let db: DatabasePool

    /// Opens (creating if needed) the cache at `path`. A table of the wrong shape is dropped and rebuilt.
    public init(path: String) throws(StorageError) {
        do {
            var configuration = Configuration()
            configuration.busyMode = .timeout(5)
            // WAL with synchronous=NORMAL never corrupts the file; a power cut may lose the last commits, which is
            // fine for a cache and saves an fsync per write.
            configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = NORMAL") }
            db = try DatabasePool(path: path, configuration: configuration)
            try db.write { db in
                do {
                    try Self.createSchema(db)
                } catch {
                    try db.execute(sql: "DROP TABLE IF EXISTS http_cache")
                    try Self.createSchema(db)
                }
            }
        } catch {
            throw StorageError("open", error)
        }
    }

    private static func createSchema(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE IF NOT EXISTS http_cache (
                    cached_at INTEGER NOT NULL,
                    expires_at INTEGER NOT NULL,
                    request_hash TEXT NOT NULL PRIMARY KEY,
                    request_method TEXT NOT NULL DEFAULT 'GET',
                    request_url TEXT NOT NULL DEFAULT 'https://unknown',
                    response_body BLOB NOT NULL,
                    response_headers BLOB,
                    response_status INTEGER NOT NULL,
                    size_bytes INTEGER NOT NULL,
                    ttl_seconds INTEGER NOT NULL);
                CREATE INDEX IF NOT EXISTS idx_http_cache_cached_at ON http_cache(cached_at);
                CREATE INDEX IF NOT EXISTS idx_http_cache_expires_at ON http_cache(expires_at);
                CREATE INDEX IF NOT EXISTS idx_http_cache_request_hash ON http_cache(request_hash);
                PRAGMA user_version = 2;
                """)
        // Verify the shape: a table left over with other columns fails here and is rebuilt.
        _ = try Row.fetchOne(
            db,
            sql:
                "SELECT cached_at, expires_at, request_hash, request_method, request_url, response_body, "
                + "response_headers, response_status, size_bytes, ttl_seconds FROM http_cache LIMIT 1"
        )
    }

    /// The journal mode in force (`wal`).
    public func journalMode() async throws(StorageError) -> String {
        do { return try await db.read { try String.fetchOne($0, sql: "PRAGMA journal_mode") ?? "" } } catch {
            throw StorageError("pragma", error)
        }
    }

    /// The stored response for `hash`, expired or not (expiry is applied by ``deleteExpired(now:)``).
    public func lookup(hash: String) async throws(StorageError) -> CachedHTTPResponse? {
        do {
            return try await db.read { db in
                guard
                    let row = try Row.fetchOne(
                        db, sql: "SELECT * FROM http_cache WHERE request_hash = ?", arguments: [hash])
                else { return nil }
                let headerData = try? row.checked("response_headers", as: Data.self)
                let headers = headerData.flatMap { try? JSONDecoder().decode([String: String].self, from: $0) } ?? [:]
                return CachedHTTPResponse(
                    status: try row.checked("response_status"), headers: headers,
                    body: try row.checked("response_body"),
                    cachedAt: try row.checked("cached_at"), expiresAt: try row.checked("expires_at"),
                    ttlSeconds: try row.checked("ttl_seconds"))
            }
        } catch {
            throw StorageError("lookup", error)
        }
    }

    /// Stores (or replaces) the response for `hash`, expiring `ttlSeconds` after `now`.
    public func store(
        hash: String, method: String, url: String, status: Int, headers: [String: String], body: Data,
        ttlSeconds: Int64, now: Int64
    ) async throws(StorageError) {
        do {
            let headerData = try JSONEncoder().encode(headers)
            try await db.write { db in
                try db.execute(
                    sql: """
                        INSERT INTO http_cache (cached_at, expires_at, request_hash, request_method, request_url, \
                        response_body,
                                                response_headers, response_status, size_bytes, ttl_seconds)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                        ON CONFLICT(request_hash) DO UPDATE SET
                            cached_at = excluded.cached_at, expires_at = excluded.expires_at, request_method = \
                        excluded.request_method,
                            request_url = excluded.request_url, response_body = excluded.response_body,
                            response_headers = excluded.response_headers, response_status = excluded.response_status,
                            size_bytes = excluded.size_bytes, ttl_seconds = excluded.ttl_seconds
                        """,
                    arguments: [
                        now, now + ttlSeconds, hash, method, url, body, headerData, status,
                        headerData.count + body.count, ttlSeconds,
                    ])
            }
        } catch {
            throw StorageError("store", error)
        }
    }

    /// Deletes rows whose expiry is at or before `now`; returns how many.
    @discardableResult
    public func deleteExpired(now: Int64) async throws(StorageError) -> Int {
        do {
            // A read first: most sends find nothing expired and need no write transaction.
            let anyExpired = try await db.read {
                try Bool.fetchOne(
                    $0, sql: "SELECT EXISTS(SELECT 1 FROM http_cache WHERE expires_at <= ?)", arguments: [now]) ?? false
            }
            guard anyExpired else { return 0 }
            return try await db.write { db in
                try db.execute(sql: "DELETE FROM http_cache WHERE expires_at <= ?", arguments: [now])
                return db.changesCount
            }
        } catch {
            throw StorageError("cleanup", error)
        }
    }

    /// Deletes the oldest rows (by `cached_at`) one at a time until the total size is at most `maxBytes`;
    /// returns how many rows were deleted.
    @discardableResult
    public func trim(maxBytes: Int64) async throws(StorageError) -> Int {
        do {
            return try await db.write { db in
                var deleted = 0
                while (try Int64.fetchOne(db, sql: "SELECT COALESCE(SUM(size_bytes), 0) FROM http_cache") ?? 0)
                    > maxBytes
                {
                    try db.execute(
                        sql:
                            "DELETE FROM http_cache WHERE request_hash = (SELECT request_hash FROM http_cache ORDER "
                            + "BY cached_at ASC, rowid ASC LIMIT 1)"
                    )
                    if db.changesCount == 0 { break }
                    deleted += db.changesCount
                }
                return deleted
            }
        } catch {
            throw StorageError("trim", error)
        }
    }

    /// Total size of the stored rows.
    public func totalSize() async throws(StorageError) -> Int64 {
        do {
            return try await db.read {
                try Int64.fetchOne($0, sql: "SELECT COALESCE(SUM(size_bytes), 0) FROM http_cache") ?? 0
            }
        } catch { throw StorageError("size", error) }
    }

    /// Number of stored rows.
    public func count() async throws(StorageError) -> Int {
        do { return try await db.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM http_cache") ?? 0 } } catch {
            throw StorageError("count", error)
        }
    }

    /// Deletes the row for `hash`; returns whether one existed.
    @discardableResult
    public func invalidate(hash: String) async throws(StorageError) -> Bool {
        do {
            return try await db.write { db in
                try db.execute(sql: "DELETE FROM http_cache WHERE request_hash = ?", arguments: [hash])
                return db.changesCount > 0
            }
        } catch {
            throw StorageError("invalidate", error)
        }
    }

    /// Deletes every row; returns how many.
    @discardableResult
    public func clear() async throws(StorageError) -> Int {
        do {
            return try await db.write { db in
                try db.execute(sql: "DELETE FROM http_cache")
                return db.changesCount
            }
        } catch {
            throw StorageError("clear", error)
        }
    }
}

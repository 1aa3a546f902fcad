import Foundation
import GRDB

/// One queued event: a stable id (reused on every retry) and its JSON payload.
public struct QueuedEvent: Sendable, Hashable {
    /// Insertion order.
    public var sequence: Int64
    /// The event's id, created once when the event was created.
    public var eventID: String
    /// The event as JSON.
    public var payload: Data
}

/// A durable FIFO of events (SQLite via GRDB, WAL, `synchronous=FULL` so an acknowledged append survives a crash).
/// Append before sending; delete only after the server accepted; bounded, dropping the oldest past the cap.
/// Every operation runs on GRDB's own serial queue through its async API: the caller suspends while SQLite writes
/// and fsyncs, and no thread of the cooperative pool is held.
public final class EventQueueStore: Sendable {
    private let db: DatabaseQueue

    /// Opens (creating if needed) the queue at `path`. The database file may grow to `maxBytes` (default 16 MiB);
    /// past it an append fails (SQLite's "database or disk is full"), as it would on a full disk.
    public init(path: String, maxBytes: Int = 16 << 20) throws(StorageError) {
        do {
            var configuration = Configuration()
            configuration.busyMode = .timeout(5)
            let maxBytes = max(64 << 10, maxBytes)
            configuration.prepareDatabase { db in
                try db.execute(sql: "PRAGMA journal_mode = WAL")
                try db.execute(sql: "PRAGMA synchronous = FULL")
                let pageSize = try Int.fetchOne(db, sql: "PRAGMA page_size") ?? 4096
                try db.execute(sql: "PRAGMA max_page_count = \(max(16, maxBytes / max(512, pageSize)))")
            }
            db = try DatabaseQueue(path: path, configuration: configuration)
            try db.write { db in
                try db.execute(
                    sql: """
                        CREATE TABLE IF NOT EXISTS event_queue (
                            sequence INTEGER PRIMARY KEY AUTOINCREMENT,
                            event_id TEXT NOT NULL UNIQUE,
                            payload BLOB NOT NULL)
                        """)
            }
        } catch {
            throw StorageError("open", error)
        }
    }

    /// Appends an event (a second append of the same id is ignored) and drops the oldest events beyond `cap`.
    /// Returns how many were dropped.
    @discardableResult
    public func append(eventID: String, payload: Data, cap: Int) async throws(StorageError) -> Int {
        do {
            return try await db.write { db in
                try db.execute(
                    sql: "INSERT OR IGNORE INTO event_queue (event_id, payload) VALUES (?, ?)",
                    arguments: [eventID, payload])
                try db.execute(
                    sql: """
                        DELETE FROM event_queue WHERE sequence IN (
                            SELECT sequence FROM event_queue ORDER BY sequence DESC LIMIT -1 OFFSET ?)
                        """, arguments: [max(0, cap)])
                return db.changesCount
            }
        } catch {
            throw StorageError("append", error)
        }
    }

    /// The oldest `limit` events, in order.
    public func peek(limit: Int) async throws(StorageError) -> [QueuedEvent] {
        do {
            return try await db.read { db in
                try Row.fetchAll(
                    db, sql: "SELECT sequence, event_id, payload FROM event_queue ORDER BY sequence LIMIT ?",
                    arguments: [limit]
                )
                .map {
                    QueuedEvent(
                        sequence: try $0.checked("sequence"), eventID: try $0.checked("event_id"),
                        payload: try $0.checked("payload"))
                }
            }
        } catch {
            throw StorageError("peek", error)
        }
    }

    /// Deletes the events with these ids.
    public func remove(eventIDs: [String]) async throws(StorageError) {
        guard !eventIDs.isEmpty else { return }
        do {
            try await db.write { db in
                for id in eventIDs {
                    try db.execute(sql: "DELETE FROM event_queue WHERE event_id = ?", arguments: [id])
                }
            }
        } catch {
            throw StorageError("remove", error)
        }
    }

    /// Events waiting.
    public func count() async throws(StorageError) -> Int {
        do { return try await db.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM event_queue") ?? 0 } } catch {
            throw StorageError("count", error)
        }
    }
}

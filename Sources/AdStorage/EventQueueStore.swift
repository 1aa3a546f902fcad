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
/// Append before sending; delete only after the server accepted; bounded, dropping the oldest past the cap or when
/// the file is full. Every operation runs on GRDB's own serial queue through its async API: the caller suspends
/// while SQLite writes and fsyncs, and no thread of the cooperative pool is held.
public final class EventQueueStore: Sendable {
    private let db: DatabaseQueue
    /// Whether the queue is on disk. A queue whose file could neither be opened nor replaced lives in memory (see
    /// ``openRecovering(path:maxBytes:)``): it still delivers, but does not survive the process.
    public let isDurable: Bool
    /// The file, or nil for an in-memory queue.
    public let path: String?
    /// The most bytes the queue's file may take.
    public let maxBytes: Int

    /// Opens (creating if needed) the queue at `path`. The database file may grow to `maxBytes` (default 16 MiB);
    /// past it an append drops the oldest events to make room (see ``append(eventID:payload:cap:)``). Throws when
    /// the file cannot be opened and written (corrupt, read-only, unreachable directory).
    public init(path: String, maxBytes: Int = 16 << 20) throws(StorageError) {
        do {
            db = try DatabaseQueue(path: path, configuration: Self.configuration(maxBytes: maxBytes))
            try Self.prepare(db)
        } catch {
            throw StorageError("open", error)
        }
        isDurable = true
        self.path = path
        self.maxBytes = max(64 << 10, maxBytes)
    }

    private init(inMemoryMaxBytes maxBytes: Int) throws(StorageError) {
        do {
            db = try DatabaseQueue(configuration: Self.configuration(maxBytes: maxBytes))
            try Self.prepare(db)
        } catch {
            throw StorageError("open", error)
        }
        isDurable = false
        path = nil
        self.maxBytes = max(64 << 10, maxBytes)
    }

    private static func configuration(maxBytes: Int) -> Configuration {
        var configuration = Configuration()
        configuration.busyMode = .timeout(5)
        let maxBytes = max(64 << 10, maxBytes)
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA journal_mode = WAL")
            try db.execute(sql: "PRAGMA synchronous = FULL")
            let pageSize = try Int.fetchOne(db, sql: "PRAGMA page_size") ?? 4096
            try db.execute(sql: "PRAGMA max_page_count = \(max(16, maxBytes / max(512, pageSize)))")
        }
        return configuration
    }

    private static func prepare(_ db: DatabaseQueue) throws {
        try db.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE IF NOT EXISTS event_queue (
                        sequence INTEGER PRIMARY KEY AUTOINCREMENT,
                        event_id TEXT NOT NULL UNIQUE,
                        payload BLOB NOT NULL)
                    """)
            // A write probe: a file SQLite opened read-only (write-protected, read-only mount) fails here, at open,
            // instead of refusing every later append.
            try db.execute(sql: "PRAGMA user_version = 1")
            // The table's shape, not only its name: a file whose event_queue has other columns would open and then
            // refuse every event for ever.
            // Read without a trapping conversion: the file may be anyone's.
            let columns = try Row.fetchAll(db, sql: "PRAGMA table_info(event_queue)").map { row in
                (
                    String.fromDatabaseValue(row["name"] as DatabaseValue) ?? "",
                    (String.fromDatabaseValue(row["type"] as DatabaseValue) ?? "").uppercased()
                )
            }
            let expected = [("sequence", "INTEGER"), ("event_id", "TEXT"), ("payload", "BLOB")]
            guard columns.count == expected.count, zip(columns, expected).allSatisfy({ $0.0 == $1.0 && $0.1 == $1.1 })
            else {
                let shown = columns.map { "\($0.0) \($0.1)" }.joined(separator: ", ")
                throw SchemaMismatch(message: "the event_queue table has (\(shown)), not (sequence, event_id, payload)")
            }
        }
    }

    private struct SchemaMismatch: Error, CustomStringConvertible {
        let message: String
        var description: String { message }
    }

    /// How ``openRecovering(path:maxBytes:)`` got its queue.
    public enum Recovery: Sendable, Hashable {
        /// The file opened.
        case opened
        /// The file could not be used; it was renamed to `quarantinedAs` and a fresh queue started at the path.
        case quarantined(reason: String, quarantinedAs: String)
        /// Neither the file nor a fresh one at its path could be used: the queue lives in memory.
        case inMemory(reason: String)
    }

    /// Opens the queue at `path`. Contention is not corruption: while another connection holds the file's lock
    /// (`SQLITE_BUSY`/`SQLITE_LOCKED` past the 5 s busy timeout) the opening is tried `contentionAttempts` times in
    /// all, then throws that contention error — the file is never moved aside for it, and the next use tries again.
    /// A file that cannot be used (corrupt, not a database, read-only, a table of another shape) is moved aside to
    /// `<path>.corrupt-<unix time>` (with its `-wal`/`-shm`), a fresh queue starts in its place and the readable rows
    /// of the old file are replayed into it (nothing acknowledged is lost when rows can still be read); when even
    /// that fails (an unwritable directory), the queue lives in memory. Blocking: call it off the cooperative pool.
    public static func openRecovering(
        path: String, maxBytes: Int = 16 << 20, contentionAttempts: Int = 3
    ) throws(StorageError) -> (store: EventQueueStore, recovery: Recovery) {
        var firstError: StorageError
        var attempt = 1
        while true {
            do {
                return (try EventQueueStore(path: path, maxBytes: maxBytes), .opened)
            } catch {
                firstError = error
            }
            guard firstError.isContention else { break }
            guard attempt < max(1, contentionAttempts) else { throw firstError }
            attempt += 1
        }
        let aside = path + ".corrupt-\(Int(Date().timeIntervalSince1970))"
        let files = FileManager.default
        if files.fileExists(atPath: path), (try? files.moveItem(atPath: path, toPath: aside)) != nil {
            for suffix in ["-wal", "-shm"] where files.fileExists(atPath: path + suffix) {
                try? files.moveItem(atPath: path + suffix, toPath: aside + suffix)
            }
            if let fresh = try? EventQueueStore(path: path, maxBytes: maxBytes) {
                fresh.replayReadableRows(of: aside)
                return (fresh, .quarantined(reason: firstError.description, quarantinedAs: aside))
            }
        }
        return (try EventQueueStore(inMemoryMaxBytes: maxBytes), .inMemory(reason: firstError.description))
    }

    /// Copies the rows of the quarantined file at `path` that can still be read (`event_id`, `payload`) into this
    /// queue, oldest first, at most what fits; a file with no readable table gives nothing. Synchronous.
    func replayReadableRows(of path: String) {
        var configuration = Configuration()
        configuration.readonly = true
        guard let old = try? DatabaseQueue(path: path, configuration: configuration) else { return }
        let rows: [(String, Data)] =
            (try? old.read { db in
                try Row.fetchAll(
                    db, sql: "SELECT event_id, payload FROM event_queue ORDER BY sequence LIMIT 100000"
                ).compactMap { row -> (String, Data)? in
                    // Never a trapping conversion: a corrupt file may hold anything in these columns.
                    guard let id = String.fromDatabaseValue(row["event_id"] as DatabaseValue),
                        let payload = Data.fromDatabaseValue(row["payload"] as DatabaseValue), !id.isEmpty
                    else { return nil }
                    return (id, payload)
                }
            }) ?? []
        try? old.close()
        guard !rows.isEmpty else { return }
        try? db.write { db in
            for (id, payload) in rows where payload.count <= maxBytes / 2 {
                try db.execute(
                    sql: "INSERT OR IGNORE INTO event_queue (event_id, payload) VALUES (?, ?)",
                    arguments: [id, payload])
            }
        }
    }

    /// What an append did.
    public struct AppendOutcome: Sendable, Hashable {
        /// Oldest events dropped because the queue held more than the cap.
        public var droppedForCap = 0
        /// Oldest events dropped because the file had reached its size limit (or the disk was full).
        public var droppedForSpace = 0
        /// Events left in the queue after the append.
        public var count = 0
    }

    /// Appends an event (a second append of the same id is ignored). With a `cap`, drops the oldest events beyond
    /// it. When the file is full (its `maxBytes`, or the disk), drops the oldest events until the new one fits:
    /// the newest work wins, as with the cap. An event larger than half the queue's `maxBytes` is refused at once,
    /// dropping nothing; so is one the database cannot take even once the queue is empty.
    @discardableResult
    public func append(eventID: String, payload: Data, cap: Int?) async throws(StorageError) -> AppendOutcome {
        guard payload.count <= maxBytes / 2 else {
            throw StorageError(
                "append",
                message: "the event (\(payload.count) bytes) is larger than half the queue (\(maxBytes) bytes)")
        }
        var outcome = AppendOutcome()
        while true {
            do {
                try await db.write { db in
                    try db.execute(
                        sql: "INSERT OR IGNORE INTO event_queue (event_id, payload) VALUES (?, ?)",
                        arguments: [eventID, payload])
                }
                // The event is stored. Trimming to the cap is a second step: if it fails (a locked or failing disk),
                // the queue is over its cap until the next append, but the event the caller handed over is kept.
                if let cap {
                    outcome.droppedForCap += (try? await trim(to: cap)) ?? 0
                }
                outcome.count = (try? await count()) ?? 0
                return outcome
            } catch let error as DatabaseError where error.resultCode == .SQLITE_FULL {
                // Make room: drop the oldest tenth (at least one), in its own transaction, then try again.
                let freed: Int
                do {
                    freed = try await db.write { db -> Int in
                        let count = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM event_queue") ?? 0
                        try db.execute(
                            sql: """
                                DELETE FROM event_queue WHERE sequence IN (
                                    SELECT sequence FROM event_queue ORDER BY sequence LIMIT ?)
                                """, arguments: [max(1, count / 10)])
                        return db.changesCount
                    }
                } catch {
                    throw StorageError("append", error)
                }
                guard freed > 0 else { throw StorageError("append", error) }
                outcome.droppedForSpace += freed
            } catch {
                throw StorageError("append", error)
            }
        }
    }

    /// Drops the oldest events beyond `cap`; returns how many went.
    private func trim(to cap: Int) async throws -> Int {
        try await db.write { db in
            try db.execute(
                sql: """
                    DELETE FROM event_queue WHERE sequence IN (
                        SELECT sequence FROM event_queue ORDER BY sequence DESC LIMIT -1 OFFSET ?)
                    """, arguments: [max(0, cap)])
            return db.changesCount
        }
    }

    /// The oldest `limit` events, in order.
    public func peek(limit: Int) async throws(StorageError) -> [QueuedEvent] {
        try await peekBatch(limit: limit).events
    }

    /// A batch read from the queue: the readable events and the sequences of rows that could not be read.
    public struct Batch: Sendable, Hashable {
        /// The oldest readable events, in order.
        public var events: [QueuedEvent] = []
        /// Rows among them whose columns hold NULL or a value of the wrong type (a corrupt or foreign file).
        public var unreadable: [Int64] = []
    }

    /// The oldest `limit` rows whose sequence is not in `excluding`, in order; a row that cannot be read is
    /// reported in ``Batch/unreadable`` instead of failing the whole read.
    public func peekBatch(limit: Int, excluding: Set<Int64> = []) async throws(StorageError) -> Batch {
        let limit = max(0, limit)
        do {
            return try await db.read { db in
                var batch = Batch()
                let rows = try Row.fetchAll(
                    db, sql: "SELECT sequence, event_id, payload FROM event_queue ORDER BY sequence LIMIT ?",
                    arguments: [limit + excluding.count])
                for row in rows {
                    guard batch.events.count + batch.unreadable.count < limit else { break }
                    guard let sequence: Int64 = try? row.checked("sequence") else { continue }
                    if excluding.contains(sequence) { continue }
                    if let id: String = try? row.checked("event_id"), let payload: Data = try? row.checked("payload") {
                        batch.events.append(QueuedEvent(sequence: sequence, eventID: id, payload: payload))
                    } else {
                        batch.unreadable.append(sequence)
                    }
                }
                return batch
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

    /// Deletes the rows with these sequences (rows whose id cannot be read, too).
    public func remove(sequences: [Int64]) async throws(StorageError) {
        guard !sequences.isEmpty else { return }
        do {
            try await db.write { db in
                for sequence in sequences {
                    try db.execute(sql: "DELETE FROM event_queue WHERE sequence = ?", arguments: [sequence])
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

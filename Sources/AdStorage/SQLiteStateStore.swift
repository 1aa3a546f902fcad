import AdMediation
import Foundation
import GRDB

/// A durable ``MediationStateStore`` (SQLite via GRDB): one row per key, written through GRDB's own queue with its
/// async API, so no thread of the cooperative pool waits on the disk. Values are limited to 1 MiB.
public final class SQLiteStateStore: MediationStateStore {
    private let db: DatabaseQueue

    /// Opens (creating if needed) the store at `path`.
    public init(path: String) throws(StorageError) {
        do {
            var configuration = Configuration()
            configuration.busyMode = .timeout(5)
            configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA journal_mode = WAL") }
            db = try DatabaseQueue(path: path, configuration: configuration)
            try db.write { db in
                try db.execute(
                    sql: """
                        CREATE TABLE IF NOT EXISTS mediation_state (
                            key TEXT PRIMARY KEY NOT NULL,
                            value BLOB NOT NULL,
                            saved_at REAL NOT NULL)
                        """)
            }
        } catch {
            throw StorageError("open", error)
        }
    }

    /// The value saved under `key`, or nil (also for a value over 1 MiB, which this store never writes).
    public func load(key: String) async throws(AdError) -> Data? {
        do {
            let data = try await db.read { db in
                try Data.fetchOne(db, sql: "SELECT value FROM mediation_state WHERE key = ?", arguments: [key])
            }
            guard let data, data.count <= 1 << 20 else { return nil }
            return data
        } catch {
            throw AdError(.storage, "state \(key.prefix(80)) could not be read: \(error)")
        }
    }

    /// Saves `data` under `key`.
    public func save(_ data: Data, key: String) async throws(AdError) {
        guard data.count <= 1 << 20 else {
            throw AdError(.storage, "state \(key.prefix(80)) is over 1 MiB (\(data.count) bytes)")
        }
        do {
            try await db.write { db in
                try db.execute(
                    sql:
                        "INSERT INTO mediation_state (key, value, saved_at) VALUES (?, ?, ?) ON CONFLICT(key) DO "
                        + "UPDATE SET value = excluded.value, saved_at = excluded.saved_at",
                    arguments: [key, data, Date().timeIntervalSince1970])
            }
        } catch {
            throw AdError(.storage, "state \(key.prefix(80)) could not be saved: \(error)")
        }
    }
}

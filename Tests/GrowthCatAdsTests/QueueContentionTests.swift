import AdStorage
import Foundation
import GRDB
import Testing

/// Issue 45, "durable queue: contention is not corruption".
@Suite("GrowthCat queue: contention is not corruption", .timeLimit(.minutes(2)))
struct QueueContentionTests {
    private func queueFile(events: [(String, String)]) throws -> String {
        let path = queuePath()
        let store = try EventQueueStore(path: path)
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in
            for (id, payload) in events {
                try db.execute(
                    sql: "INSERT INTO event_queue (event_id, payload) VALUES (?, ?)",
                    arguments: [id, Data(payload.utf8)])
            }
        }
        try queue.close()
        _ = store
        return path
    }

    /// Another process held the queue's write lock past the busy timeout when it opened: the live queue was renamed
    /// aside as corrupt and its unsent events were never sent. Now the opening fails with a contention error, the
    /// file stays where it is with its events, and a later opening (the lock gone) gets them all.
    @Test func aQueueLockedByAnotherConnectionIsNeverMovedAside() async throws {
        let path = try queueFile(events: [("e1", #"{"a":1}"#), ("e2", #"{"a":2}"#)])
        let holder = try DatabaseQueue(path: path)
        let release = DispatchSemaphore(value: 0)
        let locked = DispatchSemaphore(value: 0)
        let thread = Thread {
            try? holder.inDatabase { db in
                try db.execute(sql: "BEGIN EXCLUSIVE")
                locked.signal()
                release.wait()
                try db.execute(sql: "ROLLBACK")
            }
        }
        thread.start()
        locked.wait()
        var contention: StorageError?
        do {
            _ = try EventQueueStore.openRecovering(path: path, contentionAttempts: 1)
        } catch {
            contention = error
        }
        release.signal()
        #expect(contention != nil, "the locked file is not opened as if it were free")
        let siblings = try FileManager.default.contentsOfDirectory(
            atPath: URL(fileURLWithPath: path).deletingLastPathComponent().path)
        let name = URL(fileURLWithPath: path).lastPathComponent
        #expect(!siblings.contains { $0.hasPrefix(name + ".corrupt-") }, "nothing moved aside")
        try await Task.sleep(for: .milliseconds(50))  // the holder rolls back
        let (store, recovery) = try EventQueueStore.openRecovering(path: path)
        #expect(recovery == .opened)
        #expect(try await store.count() == 2, "the unsent events are still there")
    }

    /// A queue file with the right table name but other columns opened without error and then refused every event
    /// for ever. The shape is checked on open: such a file is moved aside and a fresh queue takes events.
    @Test func aQueueTableOfAnotherShapeIsQuarantinedAndAFreshQueueTakesEvents() async throws {
        let path = queuePath()
        let foreign = try DatabaseQueue(path: path)
        try await foreign.write { db in
            try db.execute(sql: "CREATE TABLE event_queue (id INTEGER PRIMARY KEY, body TEXT)")
        }
        try foreign.close()
        let (store, recovery) = try EventQueueStore.openRecovering(path: path)
        guard case .quarantined(let reason, _) = recovery else {
            Issue.record("expected a quarantine, got \(recovery)")
            return
        }
        #expect(reason.contains("event_queue table has"))
        _ = try await store.append(eventID: "e1", payload: Data("{}".utf8), cap: nil)
        #expect(try await store.count() == 1)
    }

    /// A quarantined file's readable rows are replayed into the new queue: nothing acknowledged is lost.
    @Test func theReadableRowsOfAQuarantinedFileAreReplayed() async throws {
        let path = try queueFile(events: [("e1", #"{"a":1}"#), ("e2", #"{"a":2}"#)])
        // The file stays readable but its table gains a column: the shape check quarantines it.
        let queue = try DatabaseQueue(path: path)
        try await queue.write { db in try db.execute(sql: "ALTER TABLE event_queue ADD COLUMN extra TEXT") }
        try queue.close()
        let (store, recovery) = try EventQueueStore.openRecovering(path: path)
        guard case .quarantined = recovery else {
            Issue.record("expected a quarantine, got \(recovery)")
            return
        }
        let batch = try await store.peekBatch(limit: 10, excluding: [])
        #expect(batch.events.map(\.eventID) == ["e1", "e2"])
    }
}

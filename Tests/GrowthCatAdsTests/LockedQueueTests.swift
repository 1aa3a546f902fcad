import AdMediation
import AdMediationTesting
import AdStorage
import CurlTransport
import Foundation
import GRDB
import Testing

@testable import GrowthCatAds

/// Holds the write lock of a queue file from a second connection (`BEGIN IMMEDIATE`) on a thread of its own, as
/// another process would, until ``release()``.
final class QueueLockHolder: Sendable {
    private let locked = DispatchSemaphore(value: 0)
    private let unlock = DispatchSemaphore(value: 0)
    private let done = DispatchSemaphore(value: 0)

    init(path: String) throws {
        let holder = try DatabaseQueue(path: path)
        let (locked, unlock, done) = (locked, unlock, done)
        Thread {
            try? holder.inDatabase { db in
                try db.execute(sql: "BEGIN IMMEDIATE")
                locked.signal()
                unlock.wait()
                try db.execute(sql: "ROLLBACK")
            }
            try? holder.close()
            done.signal()
        }.start()
        guard locked.wait(timeout: .now() + 30) == .success else { throw CancellationError() }
    }

    /// Ends the transaction and closes the connection.
    func release() {
        unlock.signal()
        _ = done.wait(timeout: .now() + 30)
    }
}

/// Issue 45, "durable queue: contention is not corruption": "busy/locked → wait and retry with back-off (the caller's
/// event is kept in memory meanwhile, bounded)". Before, an event tracked while another process held the queue's
/// write lock past SQLite's 5 s busy timeout was lost (`trackAdEvent` threw `storage`).
@Suite("GrowthCat queue: events kept in memory while the file is locked", .serialized, .timeLimit(.minutes(2)))
struct LockedQueueTests {
    /// A client whose server refuses connections (nothing is delivered: the queue keeps what was tracked), its queue
    /// opened by a first event.
    func client(path: String) async throws -> (GrowthCatClient, CurlHTTPClient) {
        let port = try LoopbackHTTPServer.refusingPort()
        let curl = CurlHTTPClient()
        var configuration = GrowthCatClient.Configuration(
            apiKey: "k", baseURL: "http://127.0.0.1:\(port)", eventQueuePath: path)
        configuration.batchInterval = .seconds(3600)
        let client = try GrowthCatClient(configuration: configuration, http: curl)
        try await client.trackAdEvent(.videoStart, for: gcAd(), placementKey: "p")
        return (client, curl)
    }

    /// The event names in the queue file at `path`, oldest first.
    func queued(_ path: String) async throws -> [String] {
        let store = try EventQueueStore(path: path)
        return try await store.peekBatch(limit: 2_000).events.compactMap { event in
            let object = try? JSONSerialization.jsonObject(with: event.payload) as? [String: Any]
            return object?["event_name"] as? String
        }
    }

    @Test func anEventTrackedWhileAnotherConnectionHoldsTheWriteLockIsWrittenWhenTheLockFrees() async throws {
        let path = queuePath()
        let (client, curl) = try await client(path: path)
        let holder = try QueueLockHolder(path: path)
        try await client.trackAdEvent(.videoComplete, for: gcAd(), placementKey: "p")
        #expect(await client.heldEventCount == 1, "kept in memory while the file is locked")
        holder.release()
        await client.heldEventsWritten()
        #expect(await client.heldEventCount == 0)
        #expect(try await queued(path) == ["video_start", "video_complete"])
        await client.shutdown()
        await curl.shutdown()
    }

    @Test func eventsTrackedWhileTheLockIsHeldWaitBehindTheFirstAndAreWrittenInOrder() async throws {
        let path = queuePath()
        let (client, curl) = try await client(path: path)
        let holder = try QueueLockHolder(path: path)
        for name in [GrowthCatAdEventName.videoProgress, .videoComplete, .adClosed] {
            try await client.trackAdEvent(name, for: gcAd(), placementKey: "p")
        }
        #expect(await client.heldEventCount == 3)
        holder.release()
        await client.heldEventsWritten()
        #expect(try await queued(path) == ["video_start", "video_progress", "video_complete", "ad_closed"])
        await client.shutdown()
        await curl.shutdown()
    }

    @Test func theEventsHeldInMemoryAreBoundedTheOldestDroppedFirst() async throws {
        let path = queuePath()
        let (client, curl) = try await client(path: path)
        let holder = try QueueLockHolder(path: path)
        for _ in 0..<(GrowthCatClient.heldEventLimit + 5) {
            try await client.trackAdEvent(.videoProgress, for: gcAd(), placementKey: "p")
        }
        #expect(await client.heldEventCount == GrowthCatClient.heldEventLimit)
        holder.release()
        await client.shutdown()
        await curl.shutdown()
    }
}

import AdMediation
import AdMediationTesting
import AdStorage
import CurlTransport
import DemandSandbox
import Foundation
import GRDB
import Logging
import Synchronization
import TestSupport
import Testing

@testable import GrowthCatAds

/// A GrowthCat server of the test's own, over loopback: the bootstrap (with a chosen `max_offline_ad_events`), a
/// rewarded catalog with a fresh token per request, events and reward validation; each path can be scripted with
/// replies taken in order before its default. It records every request.
final class ScriptedGrowthCat: Sendable {
    struct Reply: Sendable {
        var status: Int
        var headers: [(String, String)] = []
        var body = "{}"
    }

    struct Received: Sendable {
        var path: String
        var body: [UInt8]
        var status: Int
        /// The path with its query.
        var target = ""
        /// The `sdk_event_id`s of an event batch, or of a reward validation.
        var eventIDs: [String] {
            guard let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] else { return [] }
            if let events = object["events"] as? [[String: Any]] {
                return events.compactMap { $0["sdk_event_id"] as? String }
            }
            return (object["sdk_event_id"] as? String).map { [$0] } ?? []
        }
    }

    private struct State {
        var scripts: [String: [Reply]] = [:]
        var received: [Received] = []
        var serial = 0
        /// Path suffixes whose requests are read and never answered (a hung endpoint).
        var silent: [String] = []
    }

    private final class Shared: Sendable {
        let state = LockedValue(State())
    }

    private let shared: Shared
    let server: LoopbackHTTPServer

    init(maxOfflineAdEvents: Int = 500) throws {
        let shared = Shared()
        self.shared = shared
        server = try LoopbackHTTPServer { request in
            let state = shared
            let path = request.path
            if state.state.withLock({ s in s.silent.contains { path.hasSuffix($0) } }) { return .silent }
            let reply: Reply = state.state.withLock { s in
                if var queue = s.scripts[path], !queue.isEmpty {
                    let first = queue.removeFirst()
                    s.scripts[path] = queue
                    return first
                }
                s.serial += 1
                if path.hasSuffix("/sdk/config") {
                    return Reply(
                        status: 200,
                        body: #"{"app_id":"a","workspace":"test","ads":{"ads_enabled":true,"#
                            + #""formats":["interstitial","banner"],"ad_cache_ttl_seconds":300,"#
                            + #""max_offline_ad_events":\#(maxOfflineAdEvents)}}"#)
                }
                if path.hasSuffix("/ads/events") { return Reply(status: 202, body: #"{"accepted":1}"#) }
                if path.hasSuffix("/reward/validate") {
                    return Reply(
                        status: 200,
                        body: #"{"reward_validated":true,"accepted":1,"reward":{"name":"Coins","amount":5}}"#)
                }
                return Reply(
                    status: 200,
                    body: #"{"cache_ttl_seconds":300,"ads":[{"placement":{"key":"p","format":"interstitial","#
                        + #""reward_enabled":true,"reward_name":"Coins","reward_amount":5,"minimum_view_seconds":1},"#
                        + #""campaign":{"id":"c"},"creative":{"id":"cr","creative_type":"image","#
                        + #""public_asset_url":"https://x/a.png"},"#
                        + #""tracking":{"allocation_id":"a\#(s.serial)","token":"t\#(s.serial)"}}]}"#)
            }
            state.state.withLock {
                $0.received.append(
                    Received(path: path, body: request.body, status: reply.status, target: request.target))
            }
            return .respond(.init(status: reply.status, headers: reply.headers, body: Array(reply.body.utf8)))
        }
    }

    /// Requests to paths ending in `suffix` are never answered from now on (a hung endpoint).
    func hold(_ suffix: String) {
        shared.state.withLock { $0.silent.append(suffix) }
    }

    /// The next requests to `path` (a suffix: `/v1/ads/events`) get these replies, in order.
    func script(_ path: String, _ replies: [Reply]) {
        shared.state.withLock { $0.scripts["/v1" + path, default: []] += replies }
    }

    func received(_ pathSuffix: String) -> [Received] {
        shared.state.withLock { $0.received.filter { $0.path.hasSuffix(pathSuffix) } }
    }

    /// Every `sdk_event_id` the server accepted (2xx), in order.
    var acceptedEventIDs: [String] {
        received("/ads/events").filter { (200..<300).contains($0.status) }.flatMap(\.eventIDs)
    }

    var baseURL: String { server.baseURL }
}

/// A second connection to a queue file, as another process would open it: it waits for the client's write
/// transactions instead of failing with "database is locked".
func patientQueue(_ path: String) throws -> DatabaseQueue {
    var configuration = Configuration()
    configuration.busyMode = .timeout(10)
    return try DatabaseQueue(path: path, configuration: configuration)
}

/// The error `body` threw, or nil.
func thrownError<T>(_ body: () async throws -> T) async -> (any Error)? {
    do {
        _ = try await body()
        return nil
    } catch { return error }
}

/// Waits (polling, real time bounded by `seconds`) until `condition` holds; false when it never did.
func eventually(within seconds: Int = 20, _ condition: () async -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .seconds(seconds)
    while ContinuousClock.now < deadline {
        if await condition() { return true }
        try? await Task.sleep(for: .milliseconds(2))
    }
    return await condition()
}

/// Drives `clock` while `task` runs: advances by `step` whenever something sleeps on it. The real-time bound is a hang
/// guard (``HangGuard/wait``), far above what the task needs even on a busy machine: past it the task is cancelled,
/// so a stuck task fails instead of hanging.
func drive<T: Sendable>(_ clock: ManualAdClock, step: Duration, _ task: Task<T, any Error>) async throws -> T {
    let deadline = ContinuousClock.now + HangGuard.wait
    let done = Atomic<Bool>(false)
    let watcher = Task {
        while !done.load(ordering: .relaxed) && ContinuousClock.now < deadline {
            if clock.sleeperCount > 0 {
                await clock.advance(by: step)
            } else {
                try? await Task.sleep(for: .milliseconds(1))
            }
        }
        if !done.load(ordering: .relaxed) && !Task.isCancelled { task.cancel() }  // past the deadline: fail, not hang
    }
    defer { watcher.cancel() }
    // The task is not a child: cancelling the test (its time limit) must reach it, or a stuck load hangs the suite.
    let value = try await withTaskCancellationHandler {
        try await task.value
    } onCancel: {
        task.cancel()
    }
    done.store(true, ordering: .relaxed)
    return value
}

func scriptedClient(
    _ server: ScriptedGrowthCat, clock: ManualAdClock = ManualAdClock(), path: String = queuePath(),
    configure: (inout GrowthCatClient.Configuration) -> Void = { _ in }
) throws -> (GrowthCatClient, CurlHTTPClient) {
    let curl = CurlHTTPClient()
    var configuration = GrowthCatClient.Configuration(
        apiKey: "gc_test_x", baseURL: server.baseURL, eventQueuePath: path)
    configuration.retryJitter = 0
    configuration.requestTimeout = HangGuard.request  // a loopback server: a hang guard, not the 10 s default
    configure(&configuration)
    return (try GrowthCatClient(configuration: configuration, http: curl, clock: clock), curl)
}

@Suite("GrowthCat: nothing a user earned or did is lost, doubled or misrouted", .timeLimit(.minutes(2)))
struct NothingLostTests {
    // MARK: Rewards

    /// Spec: `reward_validated: false` when "the token is unknown or was already redeemed" — so a second rewarded view
    /// inside the catalog TTL must not carry the token the first view spent.
    @Test func aSecondRewardedViewInsideTheCatalogTTLGetsAFreshTokenAndIsRewarded() async throws {
        let f = try await gcFixture()
        let first = try #require(try await f.client.loadAd(placementKey: "rewarded_coins"))
        let one = try await f.client.validateAdReward(
            for: first, appUserID: "u1", sessionID: nil, viewedSeconds: 30, completed: true)
        #expect(one.rewardValidated)
        let second = try #require(try await f.client.loadAd(placementKey: "rewarded_coins"))
        #expect(second.token != first.token, "the spent token is never handed out again")
        let two = try await f.client.validateAdReward(
            for: second, appUserID: "u1", sessionID: nil, viewedSeconds: 30, completed: true)
        #expect(two.rewardValidated, "the second full view is rewarded too")
        await f.close()
    }

    /// The catalog cache still does its job for loads that spend nothing.
    @Test func loadsThatSpendNoTokenStillHitTheCatalogCache() async throws {
        let server = try ScriptedGrowthCat()
        server.script(
            "/ads/catalog",
            [
                .init(
                    status: 200,
                    body: #"{"cache_ttl_seconds":300,"ads":[{"placement":{"key":"p","format":"interstitial"},"#
                        + #""campaign":{"id":"c"},"creative":{"id":"cr","creative_type":"image","#
                        + #""public_asset_url":"https://x/a.png"},"tracking":{"allocation_id":"a","token":"t"}}]}"#)
            ])
        let (client, curl) = try scriptedClient(server)
        let a = try #require(try await client.loadAd(placementKey: "p"))
        let b = try #require(try await client.loadAd(placementKey: "p"))
        #expect(!a.isRewarded && a.token == b.token)
        #expect(server.received("/ads/catalog").count == 1)
        await curl.shutdown()
        server.server.stop()
    }

    /// Issue 43: a rewarded ad loaded ahead, before the previous one's reward was validated, carried the same one-time
    /// token, so the second full view was refused. One token, one fill: the second load fetches a fresh allocation,
    /// and both views are rewarded.
    @Test func aRewardedAdLoadedAheadNeverCarriesTheTokenOfTheAdBeforeIt() async throws {
        let server = try ScriptedGrowthCat()
        let (client, curl) = try scriptedClient(server)
        let first = try #require(try await client.loadAd(placementKey: "p"))
        let ahead = try #require(try await client.loadAd(placementKey: "p"))
        #expect(first.isRewarded && ahead.token != first.token, "one token, one fill")
        #expect(server.received("/ads/catalog").count == 2, "the cached catalog's token was handed out: fetched again")
        let one = try await client.validateAdReward(
            for: first, appUserID: "u1", sessionID: nil, viewedSeconds: 30, completed: true)
        let two = try await client.validateAdReward(
            for: ahead, appUserID: "u1", sessionID: nil, viewedSeconds: 30, completed: true)
        #expect(one.rewardValidated && two.rewardValidated)
        await curl.shutdown()
        server.server.stop()
    }

    /// Seed, status codes: "5xx → retry with exponential backoff, at most 3 retries" — for reward validation too,
    /// with the same `sdk_event_id`, each attempt in the answer.
    @Test func aTransient503OnRewardValidationIsRetriedWithTheSameEventID() async throws {
        let server = try ScriptedGrowthCat()
        server.script("/ads/reward/validate", [.init(status: 503)])
        let clock = ManualAdClock()
        let (client, curl) = try scriptedClient(server, clock: clock)
        let ad = try #require(try await client.loadAd(placementKey: "p"))
        let answer = try await drive(
            clock, step: .milliseconds(500),
            Task {
                try await client.validateAdReward(
                    for: ad, appUserID: "u1", sessionID: nil, viewedSeconds: 5, completed: true)
            })
        #expect(answer.rewardValidated)
        #expect(answer.attempts.map(\.status) == [503, 200])
        let attempts = server.received("/reward/validate")
        #expect(attempts.count == 2)
        #expect(Set(attempts.flatMap(\.eventIDs)).count == 1, "every attempt carries the same sdk_event_id")
        await curl.shutdown()
        server.server.stop()
    }

    /// Reward validation stops retrying when the caller's time is up, and says how many attempts it made.
    @Test func rewardValidationRetriesStayWithinTheCallersTime() async throws {
        let server = try ScriptedGrowthCat()
        server.script("/ads/reward/validate", Array(repeating: .init(status: 503), count: 10))
        let clock = ManualAdClock()
        // The caller's time runs on the manual clock, but an attempt's curl timeout is what is left of it, in real
        // time: a 25 s budget and back-offs of 10 s, then 20 s keep a loopback attempt far from its timeout.
        let (client, curl) = try scriptedClient(server, clock: clock) { $0.retryBaseDelay = .seconds(10) }
        let ad = try #require(try await client.loadAd(placementKey: "p"))
        let start = clock.now
        let outcome = await thrownError {
            try await drive(
                clock, step: .seconds(5),
                Task {
                    try await client.validateAdReward(
                        for: ad, appUserID: "u1", sessionID: nil, viewedSeconds: 5, completed: true,
                        timeout: .seconds(25))
                })
        }
        let error = try #require(outcome as? AdError)
        #expect(error.code == .server(status: 503))
        #expect(server.received("/reward/validate").count == 2, "tries at 0 s and 10 s; 10 + 20 s is past 25 s")
        #expect(clock.now - start < .seconds(25))
        #expect(error.message.contains("2 attempts"))
        await curl.shutdown()
        server.server.stop()
    }

    /// "Network unavailable → no retry" stays: the seed says the SDK "does not retry silently".
    @Test func anUnreachableServerIsNotRetriedForARewardValidation() async throws {
        let server = try ScriptedGrowthCat()
        let (client, curl) = try scriptedClient(server)
        let ad = try #require(try await client.loadAd(placementKey: "p"))
        server.server.stop()
        let outcome = await thrownError {
            try await client.validateAdReward(
                for: ad, appUserID: "u1", sessionID: nil, viewedSeconds: 5, completed: true)
        }
        #expect((outcome as? AdError)?.code == .network)
        #expect((outcome as? AdError)?.message.contains("1 attempt") == true)
        await curl.shutdown()
    }

    /// Issue 43 item 7 (found by the reward chaos test): a validation whose answer was lost after the server had
    /// processed it — the connection reset, or closed without an answer — was not retried ("never a transport
    /// failure"), so the server granted the reward and the user got nothing. The network is there: the client
    /// retries with the same `sdk_event_id` and gets the first answer. Every answer here closes its connection, so no
    /// attempt rides on a reused connection (which libcurl would send again by itself).
    @Test(arguments: ["reset", "closed without an answer"])
    func aValidationWhoseAnswerWasLostAfterTheServerGrantedItIsRetriedAndRewarded(loss: String) async throws {
        let validations = LockedValue<[String]>([])
        let server = try LoopbackHTTPServer { request in
            func answer(_ body: String) -> LoopbackHTTPServer.Response {
                .init(status: 200, body: Array(body.utf8), closeDelimited: true)
            }
            if request.path.hasSuffix("/sdk/config") {
                return .respond(
                    answer(
                        #"{"app_id":"a","workspace":"test","ads":{"ads_enabled":true,"formats":["interstitial"],"#
                            + #""ad_cache_ttl_seconds":300,"max_offline_ad_events":500}}"#))
            }
            if request.path.hasSuffix("/reward/validate") {
                let object = (try? JSONSerialization.jsonObject(with: Data(request.body))) as? [String: Any]
                let first = validations.withLock {
                    $0.append(object?["sdk_event_id"] as? String ?? "")
                    return $0.count == 1
                }
                // The server granted the first attempt; its answer is lost on the way.
                var granted = answer(#"{"reward_validated":true,"accepted":1,"reward":{"name":"Coins","amount":5}}"#)
                guard first else { return .respond(granted) }
                granted.closeDelimited = false  // its full length declared, none of it sent
                return loss == "reset" ? .resetMidBody(granted, afterBytes: 0) : .closeWithoutResponse
            }
            return .respond(
                answer(
                    #"{"cache_ttl_seconds":300,"ads":[{"placement":{"key":"p","format":"interstitial","#
                        + #""reward_enabled":true,"reward_name":"Coins","reward_amount":5,"minimum_view_seconds":1},"#
                        + #""campaign":{"id":"c"},"creative":{"id":"cr","creative_type":"image","#
                        + #""public_asset_url":"https://x/a.png"},"tracking":{"allocation_id":"a1","token":"t1"}}]}"#))
        }
        defer { server.stop() }
        let curl = CurlHTTPClient()
        var configuration = GrowthCatClient.Configuration(
            apiKey: "gc_test_x", baseURL: server.baseURL, eventQueuePath: queuePath())
        configuration.retryBaseDelay = .milliseconds(1)
        configuration.mediaCacheDirectory = nil
        configuration.logger = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })
        let client = try GrowthCatClient(configuration: configuration, http: curl)
        let ad = try #require(try await client.loadAd(placementKey: "p"))
        let answer = try await client.validateAdReward(
            for: ad, appUserID: "u1", sessionID: nil, viewedSeconds: 5, completed: true)
        #expect(answer.rewardValidated, "\(loss)")
        #expect(answer.attempts.count == 2 && answer.attempts.first?.error == "network", "\(answer.attempts)")
        let ids = validations.withLock { $0 }
        #expect(ids.count == 2 && Set(ids).count == 1, "one validation, sent twice with the same sdk_event_id")
        await client.shutdown()
        await curl.shutdown()
    }

    /// Seed, status codes: "5xx → retry with exponential backoff" applies to `GET /v1/sdk/config` as well.
    @Test func aTransient503OnTheConfigIsRetriedAndTheLoadFills() async throws {
        let server = try ScriptedGrowthCat()
        server.script("/sdk/config", [.init(status: 503)])
        let clock = ManualAdClock()
        let (client, curl) = try scriptedClient(server, clock: clock)
        let ad = try await drive(clock, step: .milliseconds(500), Task { try await client.loadAd(placementKey: "p") })
        #expect(ad != nil)
        #expect(server.received("/sdk/config").map(\.status) == [503, 200])
        await curl.shutdown()
        server.server.stop()
    }

    // MARK: Delivery

    /// Seed: 429 → "back off" using `Retry-After`: no event batch is posted before it passes, however many
    /// impressions and clicks happen meanwhile; after it, everything goes out.
    @Test func eventsWaitForRetryAfterBeforePostingAgain() async throws {
        let server = try ScriptedGrowthCat()
        server.script("/ads/events", [.init(status: 429, headers: [("Retry-After", "60")])])
        let clock = ManualAdClock()
        let (client, curl) = try scriptedClient(server, clock: clock)
        let ad = try #require(try await client.loadAd(placementKey: "p"))
        try await client.trackAdEvent(.impression, for: ad, placementKey: "p")
        #expect(await eventually { server.received("/ads/events").count == 1 })
        try await client.trackAdEvent(.click, for: ad, placementKey: "p")
        try await client.trackAdEvent(.click, for: ad, placementKey: "p")
        _ = await client.flushAdEvents()
        await clock.advance(by: .seconds(59))
        for _ in 0..<50 { await Task.yield() }
        #expect(server.received("/ads/events").count == 1, "nothing posted while Retry-After runs")
        await clock.advance(by: .seconds(1))
        #expect(await eventually { server.acceptedEventIDs.count == 3 })
        // The server counts the batch before the client reads its answer and deletes the rows.
        #expect(await eventually { await client.pendingEventCount == 0 })
        await curl.shutdown()
        server.server.stop()
    }

    /// A batch the server accepted is never posted again when deleting it locally fails (it used to be re-posted in
    /// a tight loop); the rows are deleted once the store works again.
    @Test func aBatchAcceptedButNotDeletedIsNeverPostedAgain() async throws {
        let server = try ScriptedGrowthCat()
        let path = queuePath()
        let clock = ManualAdClock()
        let (client, curl) = try scriptedClient(server, clock: clock, path: path)
        _ = try await client.queueRecovery  // the first use opens (creates) the queue file
        let ad = try #require(try await client.loadAd(placementKey: "p"))
        let saboteur = try patientQueue(path)
        try await saboteur.write { db in
            try db.execute(
                sql: "CREATE TRIGGER no_delete BEFORE DELETE ON event_queue BEGIN SELECT RAISE(ABORT, 'disk full'); END"
            )
        }
        try await client.trackAdEvent(.impression, for: ad, placementKey: "p")
        #expect(await eventually { server.received("/ads/events").count == 1 })
        for _ in 0..<5 {
            // Every back-off passes, and the app asks for flushes too: the accepted batch still never goes again.
            await clock.advance(by: .seconds(400))
            for _ in 0..<50 { await Task.yield() }
            _ = await client.flushAdEvents()
        }
        #expect(server.received("/ads/events").count == 1, "accepted once, never re-posted")
        #expect(await client.pendingEventCount == 0)
        try await saboteur.write { try $0.execute(sql: "DROP TRIGGER no_delete") }
        _ = await client.flushAdEvents()
        #expect(try await saboteur.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM event_queue") } == 0)
        #expect(server.received("/ads/events").count == 1)
        await curl.shutdown()
        server.server.stop()
    }

    /// A server that keeps failing gets a bounded number of requests: back-off, then a pause until the next event.
    @Test func aFailingEventServerGetsABoundedNumberOfRequests() async throws {
        let server = try ScriptedGrowthCat()
        server.script("/ads/events", Array(repeating: .init(status: 503), count: 1000))
        let clock = ManualAdClock()
        let (client, curl) = try scriptedClient(server, clock: clock)
        let ad = try #require(try await client.loadAd(placementKey: "p"))
        try await client.trackAdEvent(.impression, for: ad, placementKey: "p")
        for _ in 0..<200 {
            await clock.advance(by: .seconds(10))
            for _ in 0..<20 { await Task.yield() }
        }
        await client.deliveryIdle()
        #expect(server.received("/ads/events").count == 4, "the first try and at most 3 retries")
        #expect(await client.pendingEventCount == 1, "still queued, not lost")
        await curl.shutdown()
        server.server.stop()
    }

    /// Seed: "maxOfflineAdEvents — max events queued offline … Oldest events are dropped when the cap is exceeded":
    /// a cap of 1 must not drop the events of a show while the server is up.
    @Test func theOfflineCapDoesNotDropEventsWhileOnline() async throws {
        let server = try ScriptedGrowthCat(maxOfflineAdEvents: 1)
        let clock = ManualAdClock()
        let (client, curl) = try scriptedClient(server, clock: clock)
        let ad = try #require(try await client.loadAd(placementKey: "p"))
        for pct in [0, 25, 50, 75] {
            try await client.trackAdEvent(
                .videoProgress, for: ad, placementKey: "p", metadata: ["progress_pct": "\(pct)"])
        }
        try await client.trackAdEvent(.videoComplete, for: ad, placementKey: "p")
        try await client.trackAdEvent(.adClosed, for: ad, placementKey: "p")
        _ = await client.flushAdEvents()
        await client.deliveryIdle()
        #expect(server.acceptedEventIDs.count == 6, "every event of the show is delivered")
        await curl.shutdown()
        server.server.stop()
    }

    /// …and while offline the cap holds: the oldest are dropped, the newest kept.
    @Test func theOfflineCapDropsTheOldestWhileOffline() async throws {
        let server = try ScriptedGrowthCat(maxOfflineAdEvents: 2)
        let clock = ManualAdClock()
        let (client, curl) = try scriptedClient(server, clock: clock)
        let ad = try #require(try await client.loadAd(placementKey: "p"))
        server.server.stop()
        try await client.trackAdEvent(.impression, for: ad, placementKey: "p", metadata: ["n": "0"])
        #expect(await eventually { await client.isOffline })
        for n in 1...3 {
            try await client.trackAdEvent(.videoStart, for: ad, placementKey: "p", metadata: ["n": "\(n)"])
        }
        let store = try EventQueueStore(path: await client.queuePathForTests)
        let kept = try await store.peek(limit: 10).compactMap {
            ((try? JSONSerialization.jsonObject(with: $0.payload)) as? [String: Any]).flatMap {
                ($0["metadata"] as? [String: String])?["n"]
            }
        }
        #expect(kept == ["2", "3"])
        await curl.shutdown()
    }

    /// A full queue file (its byte quota) drops the oldest events and keeps accepting new ones with the server up,
    /// and the full queue starts a delivery.
    @Test func aFullQueueDropsTheOldestAndKeepsAcceptingEvents() async throws {
        let server = try ScriptedGrowthCat()
        let clock = ManualAdClock()
        let (client, curl) = try scriptedClient(server, clock: clock) {
            $0.eventQueueMaxBytes = 64 << 10
            $0.batchSize = 1000
        }
        let ad = try #require(try await client.loadAd(placementKey: "p"))
        let big = String(repeating: "x", count: 8 << 10)
        server.server.stop()  // nothing leaves: the queue must fill
        for n in 0..<40 {
            try await client.trackAdEvent(.videoStart, for: ad, placementKey: "p", metadata: ["n": "\(n)", "pad": big])
        }
        let pending = await client.pendingEventCount
        #expect(pending > 0 && pending < 40, "the oldest made room: \(pending) kept")
        await curl.shutdown()
    }

    // MARK: Isolation

    /// Two network ids that differ only in punctuation, or one id at two endpoints or with two keys, never share a
    /// queue file (network A's tokens were delivered to B's server under B's key).
    @Test func networkIDsThatDifferOnlyInPunctuationGetTheirOwnQueues() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("q-\(UUID().uuidString)")
        let a = try GrowthCatFactory.defaultQueuePath(
            networkID: "g.a", baseURL: "https://x", apiKey: "k", stateDirectory: directory)
        let b = try GrowthCatFactory.defaultQueuePath(
            networkID: "g_a", baseURL: "https://x", apiKey: "k", stateDirectory: directory)
        let c = try GrowthCatFactory.defaultQueuePath(
            networkID: "g_a", baseURL: "https://y", apiKey: "k", stateDirectory: directory)
        let d = try GrowthCatFactory.defaultQueuePath(
            networkID: "g_a", baseURL: "https://y", apiKey: "k2", stateDirectory: directory)
        #expect(Set([a, b, c, d]).count == 4)
        #expect(URL(fileURLWithPath: b).lastPathComponent.hasPrefix("g_a-"))
    }

    /// A queue written by the earlier naming (`<id>-events.sqlite`) is adopted, so its events are not stranded.
    @Test func aQueueUnderTheEarlierNameIsAdopted() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("q-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let legacy = try EventQueueStore(path: directory.appendingPathComponent("gc-events.sqlite").path)
        try await legacy.append(eventID: "old", payload: Data("{}".utf8), cap: nil)
        let path = try GrowthCatFactory.defaultQueuePath(
            networkID: "gc", baseURL: "https://x", apiKey: "k", stateDirectory: directory)
        #expect(try await EventQueueStore(path: path).peek(limit: 5).map(\.eventID) == ["old"])
    }

    /// One unreadable row is skipped and reported; the events behind it are delivered.
    @Test func oneUnreadableRowIsSkippedAndTheRestDelivered() async throws {
        let server = try ScriptedGrowthCat()
        let path = queuePath()
        let (client, curl) = try scriptedClient(server, path: path)
        _ = try await client.queueRecovery  // the first use opens (creates) the queue file
        let ad = try #require(try await client.loadAd(placementKey: "p"))
        let other = try patientQueue(path)
        try await other.write { db in
            try db.execute(sql: "INSERT INTO event_queue (event_id, payload) VALUES ('bad-type', 42)")
            try db.execute(sql: "INSERT INTO event_queue (event_id, payload) VALUES ('not-json', x'00ff')")
        }
        try await client.trackAdEvent(.videoStart, for: ad, placementKey: "p")
        let report = await client.flushAdEvents()
        #expect(report.unreadable == 2)
        #expect(report.sent == 1)
        #expect(server.acceptedEventIDs.count == 1)
        #expect(await client.pendingEventCount == 0)
        await curl.shutdown()
        server.server.stop()
    }

    /// A corrupt queue file degrades only its own network: it is moved aside, a fresh queue starts, and the client
    /// loads and delivers as usual.
    @Test func aCorruptQueueFileIsQuarantinedAndTheClientStillDelivers() async throws {
        let server = try ScriptedGrowthCat()
        let path = queuePath()
        try Data(repeating: 0x5A, count: 8192).write(to: URL(fileURLWithPath: path))
        let (client, curl) = try scriptedClient(server, path: path)
        let recovery = try await client.queueRecovery
        guard case .quarantined(_, let aside) = recovery else {
            Issue.record("expected the file to be quarantined, got \(recovery)")
            return
        }
        #expect(FileManager.default.fileExists(atPath: aside))
        let ad = try #require(try await client.loadAd(placementKey: "p"))
        try await client.trackAdEvent(.impression, for: ad, placementKey: "p")
        #expect(await eventually { server.acceptedEventIDs.count == 1 })
        await curl.shutdown()
        server.server.stop()
    }

    /// When not even a fresh file can be made (the directory is a file), the queue lives in memory and still works.
    @Test func anUnusableQueuePathFallsBackToAMemoryQueue() async throws {
        let server = try ScriptedGrowthCat()
        let blocker = queuePath()
        try Data("not a directory".utf8).write(to: URL(fileURLWithPath: blocker))
        let (client, curl) = try scriptedClient(server, path: blocker + "/queue.sqlite")
        let recovery = try await client.queueRecovery
        guard case .inMemory = recovery else {
            Issue.record("expected an in-memory queue, got \(recovery)")
            return
        }
        let ad = try #require(try await client.loadAd(placementKey: "p"))
        try await client.trackAdEvent(.impression, for: ad, placementKey: "p")
        #expect(await eventually { server.acceptedEventIDs.count == 1 })
        await curl.shutdown()
        server.server.stop()
    }
}

@Suite("Media cache bound", .timeLimit(.minutes(2)))
struct MediaCacheLRUTests {
    /// The media cache has a size cap: past it, the least recently used creatives go (40 loads once put 319 MiB on
    /// disk for 7 days).
    @Test func theMediaCacheEvictsTheLeastRecentlyUsedPastItsCap() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("mc-\(UUID().uuidString)")
        let cache = try MediaCache(directory: directory, maxBytes: 1 << 20)
        let chunk = Data(repeating: 1, count: 400 << 10)
        let far: Int64 = 4_000_000_000
        try await cache.store(chunk, for: "https://x/1", expiresAt: far, now: 0)
        try await cache.store(chunk, for: "https://x/2", expiresAt: far, now: 0)
        // Make the order of use explicit: 2 is older than 1 (1 is used again).
        let old = Date(timeIntervalSinceNow: -100)
        try FileManager.default.setAttributes(
            [.modificationDate: old],
            ofItemAtPath: directory.appendingPathComponent(MediaCache.fileName(for: "https://x/2") + ".asset").path)
        #expect(await cache.file(for: "https://x/1", now: 0) != nil)
        try await cache.store(chunk, for: "https://x/3", expiresAt: far, now: 0)
        #expect(await cache.file(for: "https://x/2", now: 0) == nil, "the least recently used went")
        #expect(await cache.file(for: "https://x/1", now: 0) != nil)
        #expect(await cache.file(for: "https://x/3", now: 0) != nil)
        #expect(await cache.count() == 2)
    }

    /// A creative larger than the whole cache is refused rather than evicting everything.
    @Test func aCreativeLargerThanTheCacheIsRefused() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("mc-\(UUID().uuidString)")
        let cache = try MediaCache(directory: directory, maxBytes: 1 << 20)
        await #expect(throws: StorageError.self) {
            try await cache.store(Data(count: 2 << 20), for: "https://x/big", expiresAt: 10, now: 0)
        }
    }
}

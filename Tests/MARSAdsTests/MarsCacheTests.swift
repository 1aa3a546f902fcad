import AdMediation
import AdMediationTesting
import AdStorage
import CurlTransport
import DemandSandbox
import Foundation
import Synchronization
import TestSupport
import Testing

@testable import MARSAds

/// A server whose responses carry `cacheControl`, counting requests.
func cachingServer(cacheControl: String?, status: Int = 200) throws -> LoopbackHTTPServer {
    try LoopbackHTTPServer { _ in
        var headers = [("Content-Type", "application/json")]
        if let cacheControl { headers.append(("Cache-Control", cacheControl)) }
        return .respond(.init(status: status, headers: headers, body: Array(#"{"p":[\#(tileJSON("x"))]}"#.utf8)))
    }
}

func cachedClient(_ server: LoopbackHTTPServer, config: MozAdsCacheConfig, wall: WallClock = WallClock()) -> (
    MozAdsClient, CurlHTTPClient, RecordingTelemetry
) {
    let curl = CurlHTTPClient()
    let telemetry = RecordingTelemetry()
    let client = MozAdsClientBuilder(httpClient: curl).environment(.custom(baseURL: server.baseURL + "/v1/")).telemetry(
        telemetry
    )
    .cacheConfig(config).wallClock(wall.now).build()
    return (client, curl, telemetry)
}

let p = [MozAdsPlacementRequest(placementId: "p")]

@Suite("MARS HTTP cache", .timeLimit(.minutes(2)))
struct MarsCacheTests {
    @Test func cacheFirstStoresAMissThenServesAHit() async throws {
        let f = try await marsFixture()
        _ = try await f.client.requestTileAds(tile1)
        _ = try await f.client.requestTileAds(tile1)
        #expect(f.sandbox.records.requestCounts["POST /mars/v1/ads"] == 1)
        #expect(f.telemetry.cacheOutcomes() == ["miss_stored", "hit"])
        await f.close()
    }

    @Test func networkFirstAlwaysFetchesAndStores() async throws {
        let f = try await marsFixture()
        let options = MozAdsRequestOptions(cachePolicy: .init(mode: .networkFirst))
        _ = try await f.client.requestTileAds(tile1, options: options)
        _ = try await f.client.requestTileAds(tile1, options: options)
        #expect(f.sandbox.records.requestCounts["POST /mars/v1/ads"] == 2)
        #expect(f.telemetry.cacheOutcomes() == ["miss_stored", "miss_stored"])
        await f.close()
    }

    @Test func noStoreIsNeverStored() async throws {
        let server = try cachingServer(cacheControl: "no-store")
        let (client, curl, telemetry) = cachedClient(server, config: .init(dbPath: tempDB()))
        _ = try await client.requestTileAds(p)
        _ = try await client.requestTileAds(p)
        #expect(server.requestsReceived == 2)
        #expect(telemetry.cacheOutcomes() == ["miss_not_cacheable", "miss_not_cacheable"])
        await curl.shutdown()
        server.stop()
    }

    @Test(arguments: [
        (nil as String?, nil as UInt64?, 300 as UInt64?, 300 as Int64),  // default applies alone
        ("max-age=2", nil, 300, 2),  // max-age under the default
        ("max-age=1", 20, 300, 1),  // min(max-age 1, explicit 20)
        (nil, 2, 60, 2),  // explicit 2 under the default 60
        ("max-age=900", nil, 60, 60),  // the default caps a larger max-age
    ])
    func effectiveTTLIsTheMinimumOfThePresentValues(
        cacheControl: String?, requestTTL: UInt64?, defaultTTL: UInt64?, expected: Int64
    ) async throws {
        let server = try cachingServer(cacheControl: cacheControl)
        let path = tempDB()
        let (client, curl, _) = cachedClient(server, config: .init(dbPath: path, defaultCacheTtlSeconds: defaultTTL))
        _ = try await client.requestTileAds(
            p, options: .init(cachePolicy: .init(mode: .cacheFirst, ttlSeconds: requestTTL)))
        let store = try HTTPCacheStore(path: path)
        let hash = MozAdsClient.requestHash(
            environment: .custom(baseURL: server.baseURL + "/v1/"), placements: [.init(id: "p", count: 1)], flags: [:],
            ohttp: false)
        let row = try #require(try await store.lookup(hash: hash))
        #expect(row.ttlSeconds == expected)
        #expect(row.expiresAt - row.cachedAt == expected)
        await curl.shutdown()
        server.stop()
    }

    @Test func ttlIsCappedAtSevenDays() throws {
        guard
            case .success(let cache) = MarsHTTPCache.make(
                .init(dbPath: tempDB(), defaultCacheTtlSeconds: 7 * 24 * 3600))
        else {
            Issue.record("cache did not build")
            return
        }
        #expect(cache.effectiveTTL(serverMaxAge: nil, requestTTL: 30 * 24 * 3600) == 7 * 24 * 3600)
    }

    @Test func anEntryPastItsTTLIsAMiss() async throws {
        let server = try cachingServer(cacheControl: "max-age=2")
        let wall = WallClock()
        let (client, curl, telemetry) = cachedClient(server, config: .init(dbPath: tempDB()), wall: wall)
        _ = try await client.requestTileAds(p)
        wall.advance(1)
        _ = try await client.requestTileAds(p)
        wall.advance(1)
        _ = try await client.requestTileAds(p)
        #expect(server.requestsReceived == 2)
        #expect(telemetry.cacheOutcomes() == ["miss_stored", "hit", "miss_stored"])
        await curl.shutdown()
        server.stop()
    }

    @Test func onlyStatus200IsCached() async throws {
        let server = try cachingServer(cacheControl: "max-age=300", status: 500)
        let (client, curl, telemetry) = cachedClient(server, config: .init(dbPath: tempDB()))
        _ = await marsError { _ = try await client.requestTileAds(p) }
        _ = await marsError { _ = try await client.requestTileAds(p) }
        #expect(server.requestsReceived == 2)
        #expect(telemetry.cacheOutcomes().isEmpty)
        await curl.shutdown()
        server.stop()
    }

    /// The seed: "`ttlSeconds` … `0` disables caching for this request" — no read and no write, over real loopback
    /// HTTP. Upstream (and this client before) answered a `cacheFirst` request with TTL 0 from an existing entry.
    @Test func ttlSecondsZeroDisablesCachingForThisRequest() async throws {
        let server = try cachingServer(cacheControl: nil)
        let (client, curl, telemetry) = cachedClient(server, config: .init(dbPath: tempDB()))
        let noCaching = MozAdsRequestOptions(cachePolicy: MozAdsRequestCachePolicy(mode: .cacheFirst, ttlSeconds: 0))
        _ = try await client.requestTileAds(mozAdRequests: p, options: nil)  // stores an entry
        _ = try await client.requestTileAds(mozAdRequests: p, options: noCaching)
        _ = try await client.requestTileAds(mozAdRequests: p, options: noCaching)
        #expect(server.requestsReceived == 3, "both TTL-0 requests reach the server although an entry is cached")
        _ = try await client.requestTileAds(mozAdRequests: p, options: nil)
        #expect(server.requestsReceived == 3, "the entry stored before is still there for requests that cache")
        #expect(telemetry.cacheOutcomes() == ["miss_stored", "no_cache", "no_cache", "hit"])
        await curl.shutdown()
        server.stop()
    }

    /// The seed: "`0` disables caching for this request" — a TTL-0 answer is never stored, whatever the mode, and two
    /// TTL-0 requests on an empty cache both reach the server.
    @Test(arguments: [MozAdsCacheMode.cacheFirst, .networkFirst])
    func aTTLZeroAnswerIsNeverStored(mode: MozAdsCacheMode) async throws {
        let server = try cachingServer(cacheControl: "max-age=600")
        let (client, curl, telemetry) = cachedClient(server, config: .init(dbPath: tempDB()))
        let noCaching = MozAdsRequestOptions(cachePolicy: MozAdsRequestCachePolicy(mode: mode, ttlSeconds: 0))
        _ = try await client.requestTileAds(mozAdRequests: p, options: noCaching)
        _ = try await client.requestTileAds(mozAdRequests: p, options: noCaching)
        _ = try await client.requestTileAds(mozAdRequests: p, options: nil)
        #expect(server.requestsReceived == 3)
        #expect(telemetry.cacheOutcomes() == ["no_cache", "no_cache", "miss_stored"])
        await curl.shutdown()
        server.stop()
    }

    @Test func callbacksBypassTheCache() async throws {
        let f = try await marsFixture()
        let tile = try #require(try await f.client.requestTileAds(tile1)["mock_tile_1"])
        try await f.client.recordClick(tile.callbacks.click)
        try await f.client.recordClick(tile.callbacks.click)
        #expect(f.sandbox.marsRecords.callbacks.count == 2)
        #expect(f.telemetry.cacheOutcomes() == ["miss_stored"])
        await f.close()
    }

    @Test func clearCacheRemovesEveryEntry() async throws {
        let f = try await marsFixture()
        _ = try await f.client.requestTileAds(tile1)
        try await f.client.clearCache()
        _ = try await f.client.requestTileAds(tile1)
        #expect(f.sandbox.records.requestCounts["POST /mars/v1/ads"] == 2)
        await f.close()
    }

    @Test func clearCacheWithoutACacheSucceeds() async throws {
        let f = try await marsFixture(cache: nil)
        try await f.client.clearCache()
        #expect(!f.client.isCacheEnabled)
        await f.close()
    }

    @Test(arguments: [
        (MozAdsCacheConfig(dbPath: "  "), "empty_db_path"),
        (MozAdsCacheConfig(dbPath: "x.sqlite", defaultCacheTtlSeconds: 0), "invalid_ttl"),
        (MozAdsCacheConfig(dbPath: "x.sqlite", defaultCacheTtlSeconds: 8 * 24 * 3600), "invalid_ttl"),
        (MozAdsCacheConfig(dbPath: "x.sqlite", maxSizeMib: 0), "invalid_max_size"),
        (MozAdsCacheConfig(dbPath: "x.sqlite", maxSizeMib: 101), "invalid_max_size"),
        (MozAdsCacheConfig(dbPath: "/nonexistent-dir/for/sure/x.sqlite"), "database_error"),
    ])
    func invalidCacheConfigurationDisablesTheCacheWithTelemetry(config: MozAdsCacheConfig, label: String) async throws {
        let f = try await marsFixture(cache: config)
        // The client still works; its first request is what opens the file (`database_error` is found then).
        _ = try await f.client.requestTileAds(tile1)
        #expect(!f.client.isCacheEnabled)
        #expect(f.telemetry.log.contains("build:\(label)"))
        await f.close()
    }

    @Test("building a client with a cache opens no file: the first request does")
    func buildingOpensNoFile() async throws {
        let path = tempDB()
        let f = try await marsFixture(cache: MozAdsCacheConfig(dbPath: path))
        #expect(!FileManager.default.fileExists(atPath: path), "build() created the SQLite file")
        _ = try await f.client.requestTileAds(tile1)
        #expect(FileManager.default.fileExists(atPath: path), "the first request did not open the cache")
        #expect(f.client.isCacheEnabled)
        await f.close()
    }

    @Test func cacheConfigurationBoundsAreAccepted() throws {
        for config in [
            MozAdsCacheConfig(dbPath: tempDB(), defaultCacheTtlSeconds: 1, maxSizeMib: 1),
            MozAdsCacheConfig(dbPath: tempDB(), defaultCacheTtlSeconds: 7 * 24 * 3600, maxSizeMib: 100),
        ] {
            guard case .success = MarsHTTPCache.make(config) else {
                Issue.record("\(config) rejected")
                continue
            }
        }
    }
}

@Suite("HTTP cache store (SQLite)", .timeLimit(.minutes(2)))
struct HTTPCacheStoreTests {
    @Test func usesWAL() async throws {
        #expect(try await HTTPCacheStore(path: tempDB()).journalMode() == "wal")
    }

    @Test func storeAndLookupRoundTripStatusHeadersAndBody() async throws {
        let store = try HTTPCacheStore(path: tempDB())
        try await store.store(
            hash: "h", method: "POST", url: "u", status: 200, headers: ["a": "b"], body: Data("body".utf8),
            ttlSeconds: 30, now: 100)
        let row = try #require(try await store.lookup(hash: "h"))
        #expect(row.status == 200 && row.headers == ["a": "b"] && row.body == Data("body".utf8) && row.expiresAt == 130)
    }

    @Test func upsertWithAShorterTTLMovesExpiryEarlier() async throws {
        let store = try HTTPCacheStore(path: tempDB())
        try await store.store(
            hash: "h", method: "POST", url: "u", status: 200, headers: [:], body: Data(), ttlSeconds: 300, now: 100)
        try await store.store(
            hash: "h", method: "POST", url: "u", status: 200, headers: [:], body: Data(), ttlSeconds: 10, now: 150)
        let row = try #require(try await store.lookup(hash: "h"))
        #expect(row.cachedAt == 150 && row.expiresAt == 160)
        #expect(try await store.count() == 1)
    }

    @Test func deletingExpiredRowsRemovesOnlyThoseAndLookupIgnoresExpiryUntilThen() async throws {
        let store = try HTTPCacheStore(path: tempDB())
        try await store.store(
            hash: "old", method: "POST", url: "u", status: 200, headers: [:], body: Data(), ttlSeconds: 10, now: 100)
        try await store.store(
            hash: "new", method: "POST", url: "u", status: 200, headers: [:], body: Data(), ttlSeconds: 100, now: 100)
        #expect(try await store.lookup(hash: "old") != nil, "lookup does not apply expiry")
        #expect(try await store.deleteExpired(now: 110) == 1)
        #expect(try await store.lookup(hash: "old") == nil)
        #expect(try await store.lookup(hash: "new") != nil)
    }

    @Test func trimEvictsTheOldestFirst() async throws {
        let store = try HTTPCacheStore(path: tempDB())
        for i in 0..<5 {
            try await store.store(
                hash: "h\(i)", method: "POST", url: "u", status: 200, headers: [:],
                body: Data(repeating: 1, count: 400), ttlSeconds: 100, now: Int64(100 + i))
        }
        _ = try await store.trim(maxBytes: 1024)
        #expect(try await store.totalSize() <= 1024)
        for evicted in ["h0", "h1", "h2"] { #expect(try await store.lookup(hash: evicted) == nil) }
        #expect(try await store.lookup(hash: "h4") != nil)
    }

    @Test func clearReturnsTheNumberOfRowsAndInvalidateDeletesOne() async throws {
        let store = try HTTPCacheStore(path: tempDB())
        for i in 0..<3 {
            try await store.store(
                hash: "h\(i)", method: "POST", url: "u", status: 200, headers: [:], body: Data(), ttlSeconds: 100,
                now: 1)
        }
        #expect(try await store.invalidate(hash: "h1"))
        #expect(try await store.count() == 2)
        #expect(try await store.clear() == 2)
    }

    @Test func aTableOfTheWrongShapeIsRebuilt() async throws {
        let path = tempDB()
        do {
            let store = try HTTPCacheStore(path: path)
            _ = store
        }
        // Replace the table with a one-column one, as a corrupted or old database would have.
        let python = try await ChildProcess.run(
            "python3",
            [
                "-c",
                ("import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('DROP TABLE "
                    + "http_cache'); c.execute('CREATE TABLE http_cache (x TEXT)'); c.commit()"),
                path,
            ], deadline: .seconds(30))
        #expect(python.status == 0, "\(python.err)")
        let store = try HTTPCacheStore(path: path)
        try await store.store(
            hash: "h", method: "POST", url: "u", status: 200, headers: [:], body: Data(), ttlSeconds: 1, now: 1)
        #expect(try await store.count() == 1)
    }
}

@Suite("MARS cache coherence", .timeLimit(.minutes(2)))
struct MarsCacheCoherenceTests {
    @Test func aRowEvictedByTheSizeLimitIsNoLongerServedFromMemory() async throws {
        // Each answer is ~600 KB, so the second store pushes the first out of a 1 MiB cache (in 100 KB strings: the
        // client refuses any one string over 256 KiB).
        let padding = Array(repeating: "\"" + String(repeating: "x", count: 100_000) + "\"", count: 6).joined(
            separator: ",")
        let server = try LoopbackHTTPServer { request in
            let placement = String(decoding: request.body, as: UTF8.self).contains("\"p2\"") ? "p2" : "p1"
            return .respond(
                .init(
                    headers: [("Content-Type", "application/json")],
                    body: Array(#"{"padding":[\#(padding)],"\#(placement)":[\#(tileJSON(placement))]}"#.utf8)))
        }
        let (client, curl, telemetry) = cachedClient(server, config: .init(dbPath: tempDB(), maxSizeMib: 1))
        _ = try await client.requestTileAds([.init(placementId: "p1")])
        _ = try await client.requestTileAds([.init(placementId: "p1")])
        #expect(server.requestsReceived == 1, "a hit while the row exists")
        _ = try await client.requestTileAds([.init(placementId: "p2")])  // evicts p1's row
        _ = try await client.requestTileAds([.init(placementId: "p1")])
        #expect(server.requestsReceived == 3, "p1 was evicted from SQLite, so it is not served from memory either")
        #expect(telemetry.cacheOutcomes() == ["miss_stored", "hit", "miss_stored", "miss_stored"])
        await curl.shutdown()
        server.stop()
    }
}

// Sandbox and cache benchmark, in one run:
// 1. the demand sandbox's own throughput on loopback (requests/s with CurlHTTPClient at c=8) per route, next to
//    the raw LoopbackHTTPServer as the ceiling, so client benchmarks know they measure the client;
// 2. MARS requestTileAds served from the SQLite cache vs a network round trip to the sandbox (p50/p99 µs).
import AdMediation
import AdMediationTesting
import AdStorage
import AdTransport
import CurlTransport
import DemandSandbox
import Foundation
import MARSAds

// Usage: sandbox-bench [requests-per-route] [--json]
let json = CommandLine.arguments.contains("--json")
let total = Int(CommandLine.arguments.dropFirst().first { !$0.hasPrefix("--") } ?? "") ?? 4000
/// Markdown lines, printed unless --json.
func say(_ line: String) { if !json { print(line) } }
var figures: [String: Double] = [:]
let client = CurlHTTPClient()

func throughput(_ request: HTTPRequest, concurrency: Int = 8) async throws -> Double {
    for _ in 0..<100 { _ = try await client.send(request) }
    let start = ContinuousClock.now
    try await withThrowingTaskGroup(of: Void.self) { group in
        for worker in 0..<concurrency {
            group.addTask {
                var i = worker
                while i < total {
                    let response = try await client.send(request)
                    precondition(response.status < 500, "status \(response.status)")
                    i += concurrency
                }
            }
        }
        try await group.waitForAll()
    }
    return Double(total) / (ContinuousClock.now - start).seconds
}

let raw = try LoopbackHTTPServer { _ in
    .respond(.init(headers: [("Content-Type", "application/json")], body: Array("{}".utf8)))
}
let sandbox = try await DemandSandbox.start()
let gcAuth: HTTPHeaders = ["Authorization": "Bearer gc_test_demo"]
let marsBody = Data(#"{"context_id":"c","placements":[{"placement":"mock_tile_1","count":1,"content":null}]}"#.utf8)
let routes: [(String, HTTPRequest)] = [
    ("raw LoopbackHTTPServer (ceiling)", HTTPRequest(url: raw.baseURL + "/")),
    ("sandbox: unknown route (404)", HTTPRequest(url: sandbox.rootURL + "/nothing")),
    (
        "sandbox: GrowthCat catalog",
        HTTPRequest(url: sandbox.growthcatBaseURL + "/v1/ads/catalog?placement_key=home_banner", headers: gcAuth)
    ),
    (
        "sandbox: MARS POST /v1/ads",
        HTTPRequest(
            method: .post, url: sandbox.marsBaseURL + "ads", headers: ["Content-Type": "application/json"],
            body: marsBody)
    ),
    (
        "sandbox: app-open ad",
        HTTPRequest(
            url: sandbox.appOpenBaseURL
                + "/appopen/v1/ad?ad_unit_id=ca-app-pub-3940256099942544/5575463023&request_id=r")
    ),
]
say("| route (CurlHTTPClient, c=8, \(total) requests) | requests/s |")
say("|---|---|")
// BENCH_ONLY=catalog measures the routes whose name contains it, and skips the MARS cache part (for profiling).
let only = ProcessInfo.processInfo.environment["BENCH_ONLY"]
for (name, request) in routes where only.map({ name.contains($0) }) ?? true {
    let rps = try await throughput(request)
    figures["rps \(name)"] = rps
    say("| \(name) | \(Int(rps)) |")
}

if only != nil {
    await client.shutdown()
    await sandbox.shutdown()
    exit(0)
}

// MARS cache hit vs network.
let path = FileManager.default.temporaryDirectory.appendingPathComponent("mars-bench-\(UUID().uuidString).sqlite").path
let mars = MozAdsClientBuilder(httpClient: client).environment(.custom(baseURL: sandbox.marsBaseURL))
    .cacheConfig(MozAdsCacheConfig(dbPath: path)).build()
let placements = [MozAdsPlacementRequest(placementId: "mock_tile_1")]
func percentiles(_ options: MozAdsRequestOptions?, count: Int) async throws -> (p50: Double, p99: Double) {
    var samples: [Double] = []
    for _ in 0..<count {
        let start = ContinuousClock.now
        let tiles = try await mars.requestTileAds(placements, options: options)
        samples.append((ContinuousClock.now - start).milliseconds * 1000)
        precondition(tiles["mock_tile_1"] != nil)
    }
    samples.sort()
    return (samples[samples.count / 2], samples[samples.count * 99 / 100])
}
_ = try await mars.requestTileAds(placements)  // store once
let hit = try await percentiles(nil, count: 2000)
let network = try await percentiles(MozAdsRequestOptions(cachePolicy: .init(mode: .networkFirst)), count: 2000)
say("")
say("| MARS requestTileAds (2000 each) | p50 µs | p99 µs |")
say("|---|---|---|")
say(String(format: "| cache hit (cacheFirst, SQLite WAL) | %.0f | %.0f |", hit.p50, hit.p99))
say(
    String(
        format: "| network round trip to the sandbox (networkFirst, stores too) | %.0f | %.0f |", network.p50,
        network.p99))
say(String(format: "| ratio network / hit at p50 | %.1fx | |", network.p50 / hit.p50))
figures["mars cache hit p50 us"] = hit.p50
figures["mars cache hit p99 us"] = hit.p99
figures["mars network p50 us"] = network.p50
figures["mars network p99 us"] = network.p99
// Where a hit's time goes: the store's own calls, timed alone.

let store = try HTTPCacheStore(path: path)
func median(_ n: Int, _ body: () async throws -> Void) async rethrows -> Double {
    var samples: [Double] = []
    for _ in 0..<n {
        let start = ContinuousClock.now
        try await body()
        samples.append((ContinuousClock.now - start).milliseconds * 1000)
    }
    samples.sort()
    return samples[samples.count / 2]
}
let rows = try await store.count()
let lookup = try await median(2000) { _ = try await store.lookup(hash: "nope") }
let cleanup = try await median(2000) { _ = try await store.deleteExpired(now: 0) }
say(String(format: "| of which: HTTPCacheStore.lookup alone (%d rows) | %.0f | |", rows, lookup))
say(String(format: "| of which: HTTPCacheStore.deleteExpired with nothing expired | %.0f | |", cleanup))
figures["store lookup p50 us"] = lookup
figures["store deleteExpired p50 us"] = cleanup
if json {
    print(String(decoding: try JSONSerialization.data(withJSONObject: figures, options: [.sortedKeys]), as: UTF8.self))
}
await client.shutdown()
await sandbox.shutdown()
raw.stop()
try? FileManager.default.removeItem(atPath: path)

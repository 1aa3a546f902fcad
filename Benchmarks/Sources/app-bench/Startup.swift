// `app-bench startup [runs]`: cold starts in fresh processes (this binary with `startup-child`), from constructing
// the transport, the five networks and the Mediator to the first fill against the sandbox (in another child), with
// and without a GrowthCat whose set-up endpoint (`GET /v1/sdk/config`) hangs.
import AdMediation
import AppOpenAds
import ChartboostBanners
import CurlTransport
import Foundation
import GrowthCatAds
import Logging
import MARSAds
import OpenRTBBidder

enum StartupBench {
    /// One cold start's figures, in microseconds (the child prints them as one JSON line).
    struct Figures: Codable {
        /// Wall time on the calling thread from the first constructor to the Mediator's return.
        var constructWall: Double
        /// CPU time of the calling thread over the same span.
        var constructCPU: Double
        /// Wall time of each constructor alone, in order.
        var pieces: [String: Double]
        /// From the first constructor to the end of GrowthCat's set-up call (nil: not done by the first fill).
        var ready: Double?
        /// From the first constructor to the first filled decision.
        var firstFill: Double
        /// Which network filled.
        var winner: String
    }

    static let quiet = Logger(label: "bench", factory: { _ in SwiftLogNoOpLogHandler() })

    /// `startup-child <sandbox root URL> <GrowthCat base URL> <scratch directory>`: one cold start.
    static func child(_ arguments: [String]) async throws {
        guard arguments.count >= 3 else { throw BenchError("startup-child: sandbox, growthcat, directory") }
        let (root, growthcatBase, directory) = (arguments[0], arguments[1], arguments[2])
        var pieces: [String: Double] = [:]
        let start = ContinuousClock.now
        let cpu0 = threadCPUMicros()
        var mark = start
        func lap(_ name: String) {
            let now = ContinuousClock.now
            pieces[name] = (now - mark).ms * 1000
            mark = now
        }
        // The construction an app runs at launch, on its calling thread.
        let http = CurlHTTPClient(logger: quiet)
        lap("CurlHTTPClient")
        var gcConfiguration = GrowthCatClient.Configuration(
            apiKey: "gc_test_demo", baseURL: growthcatBase + "/growthcat", eventQueuePath: directory + "/gc.sqlite")
        gcConfiguration.logger = quiet
        let gcClient = try GrowthCatClient(configuration: gcConfiguration, http: http)
        lap("GrowthCatClient")
        let growthcat = GrowthCatNetwork(client: gcClient)
        var cbConfiguration = ChartboostNetwork.Configuration(
            baseURL: root + "/chartboost", appID: "cb_app_demo", appSignature: "cb_sig_demo_secret")
        cbConfiguration.id = "chartboost"
        let chartboost = ChartboostNetwork(configuration: cbConfiguration, http: http)
        lap("ChartboostNetwork")
        let appOpen = AppOpenNetwork(configuration: .init(baseURL: root + "/appopen"), http: http)
        lap("AppOpenNetwork")
        let mars = MarsNetwork(
            client: MozAdsClientBuilder(httpClient: http).environment(.custom(baseURL: root + "/mars/v1/"))
                .cacheConfig(MozAdsCacheConfig(dbPath: directory + "/mars.sqlite")).build())
        lap("MozAdsClient + MarsNetwork")
        var bidderConfiguration = BiddingNetwork.Configuration(baseURL: root + "/openrtb/rtb-a")
        bidderConfiguration.id = "rtb-a"
        let bidder = BiddingNetwork(configuration: bidderConfiguration, http: http)
        lap("BiddingNetwork")
        // The banner placement: the bidder, then Chartboost, then GrowthCat, asked in parallel.
        let configuration = MediationConfiguration(placements: [
            "banner": PlacementConfiguration(
                format: .banner(.standard),
                lines: [
                    WaterfallLine(network: "chartboost", placement: "startup", timeout: .milliseconds(500), ecpm: 10),
                    WaterfallLine(
                        network: "growthcat", placement: "home_banner", timeout: .milliseconds(500), ecpm: 9),
                ], deadline: .seconds(2), bidders: [BidderLine(network: "rtb-a", placement: "startup")]),
            "app_open": PlacementConfiguration(
                format: .appOpen, lines: [WaterfallLine(network: "appopen", placement: AppOpenNetwork.testAdUnitID)]),
            "tile": PlacementConfiguration(
                format: .tile, lines: [WaterfallLine(network: "mars", placement: "mock_tile_1")]),
        ])
        let mediator = try Mediator(
            networks: [growthcat, chartboost, appOpen, mars, bidder], configuration: configuration, logger: quiet)
        lap("Mediator")
        let constructWall = (ContinuousClock.now - start).ms * 1000
        let constructCPU = threadCPUMicros() - cpu0
        // GrowthCat's set-up call, started by the app in the background at launch.
        let ready = Task { () -> Double? in
            _ = try? await gcClient.refreshSDKConfig()
            return await gcClient.sdkBootstrap == nil ? nil : (ContinuousClock.now - start).ms * 1000
        }
        let outcome = await mediator.loadWithTrace(AdRequest(placement: "banner", format: .banner(.standard)))
        let firstFill = (ContinuousClock.now - start).ms * 1000
        guard case .success(.filled(let ad)) = outcome.result else {
            throw BenchError("no first fill: \(outcome.trace)")
        }
        // Ready by the first fill, or not: the run does not wait for a hung set-up call.
        let readyAt: Double?
        if growthcatBase == root {
            readyAt = await ready.value
        } else {
            ready.cancel()
            readyAt = nil
        }
        let figures = Figures(
            constructWall: constructWall, constructCPU: constructCPU, pieces: pieces, ready: readyAt,
            firstFill: firstFill, winner: ad.networkID)
        emit(String(decoding: try JSONEncoder().encode(figures), as: UTF8.self))
        exit(0)
    }

    static func run(runs: Int, json: Bool) async throws {
        let (sandboxChild, root) = try startSandboxChild()
        defer { sandboxChild.kill() }
        let hanging = try HangingPort()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("app-bench-\(getpid())").path
        var results: [String: [Figures]] = [:]
        let variants = [("all answer", root), ("GrowthCat set-up hangs", hanging.baseURL)]
        for run in 0..<runs {
            for (name, growthcat) in variants {
                let scratch = directory + "/\(run)-\(name.count)"
                try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
                let child = try Child(["startup-child", root, growthcat, scratch])
                let line = child.output()
                try? FileManager.default.removeItem(atPath: scratch)
                guard let figures = try? JSONDecoder().decode(Figures.self, from: Data(line.utf8)) else {
                    throw BenchError("startup-child (\(name)) printed: \(line)")
                }
                results[name, default: []].append(figures)
            }
        }
        try? FileManager.default.removeItem(atPath: directory)
        if json {
            var object: [String: Any] = [:]
            for (name, figures) in results {
                object[name] = [
                    "construct_wall_us_p50": percentile(figures.map(\.constructWall), 0.5),
                    "construct_wall_us_p99": percentile(figures.map(\.constructWall), 0.99),
                    "first_fill_us_p50": percentile(figures.map(\.firstFill), 0.5),
                    "first_fill_us_p99": percentile(figures.map(\.firstFill), 0.99),
                ]
            }
            print(String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self))
            return
        }
        print("\(runs) cold starts per variant, alternating, each in a fresh process; µs")
        print("")
        print("| variant | measure | p50 | p99 | max |")
        print("|---|---|---|---|---|")
        for (name, _) in variants {
            let figures = results[name] ?? []
            func row(_ measure: String, _ values: [Double]) {
                print(
                    "| \(name) | \(measure) | \(fixed(percentile(values, 0.5), 0)) | "
                        + "\(fixed(percentile(values, 0.99), 0)) | \(fixed(values.max() ?? 0, 0)) |")
            }
            row("construct, calling thread, wall", figures.map(\.constructWall))
            row("construct, calling thread, CPU", figures.map(\.constructCPU))
            let ready = figures.compactMap(\.ready)
            if ready.isEmpty {
                print("| \(name) | GrowthCat ready (set-up call done) | never | never | never |")
            } else {
                row("GrowthCat ready (set-up call done), \(ready.count)/\(figures.count)", ready)
            }
            row("first fill", figures.map(\.firstFill))
            let winners = Dictionary(grouping: figures.map(\.winner), by: { $0 }).mapValues(\.count)
            print("| \(name) | first fill by | \(winners.sorted { $0.key < $1.key }) | | |")
        }
        print("")
        print("Constructors alone (all answer), wall µs on the calling thread:")
        print("")
        print("| constructor | p50 | p99 |")
        print("|---|---|---|")
        let all = results[variants[0].0] ?? []
        for piece in all.first?.pieces.keys.sorted() ?? [] {
            let values = all.compactMap { $0.pieces[piece] }
            print("| \(piece) | \(fixed(percentile(values, 0.5), 0)) | \(fixed(percentile(values, 0.99), 0)) |")
        }
    }
}

// `app-bench hung [auctions]`: a 20-source placement (10 OpenRTB bidders, then 10 Chartboost waterfall lines) where
// k sources hang (k = 0, 1, 5, 19), parallel and sequential in the same run: decision latency against the placement's
// deadline and CPU per auction. The sandbox runs in a child process; a hung source is a port that never accepts (the
// transport cancels it), or — the rows marked `ignores cancel` — a partner SDK whose load ignores cancellation and
// answers 3 s later whatever happens, as closed SDKs do (issue 42: the caller must still get its answer at the
// decision).
import AdMediation
import ChartboostBanners
import CurlTransport
import Foundation
import Logging
import OpenRTBBidder
import Synchronization

/// A partner SDK that ignores cancellation: every load answers (no fill) 3 s after it started, whatever happens.
final class StubbornNetwork: AdNetwork {
    let id: String
    let capabilities = AdNetworkCapabilities(formats: [.banner], reportsPrice: true)
    init(id: String) { self.id = id }
    func load(_ request: AdRequest) async throws -> AdLoadResult {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().asyncAfter(deadline: .now() + 3) { done.resume() }
        }
        return .noFill(NoFill(reason: "answered after 3 s"))
    }
}

/// The figures of one cell.
struct HungCell {
    var kind = "socket"
    var mode: String
    var hung: Int
    var p50: Double
    var p99: Double
    var max: Double
    var cpuPerAuction: Double
    var fills: Int
    var auctions: Int
    /// Auctions that had not answered 2 s after the deadline (left running; not in the percentiles).
    var stuck: Int
}

/// The continuation of one bounded auction, resumed once by whichever comes first.
final class Once: Sendable {
    let slot = Mutex<CheckedContinuation<MediationOutcome?, Never>?>(nil)
}

enum HungBench {
    static let bidderTimeout = Duration.milliseconds(150)
    static let lineTimeout = Duration.milliseconds(150)
    static let deadline = Duration.milliseconds(400)
    static let quiet = Logger(label: "admediation.mediator", factory: { _ in SwiftLogNoOpLogHandler() })

    /// The order in which sources hang: b0, cb0, b1, cb1, …; with 19 hung only the last line (cb9) answers.
    static func hungSources(_ k: Int) -> Set<String> {
        let order = (0..<10).flatMap { ["b\($0)", "cb\($0)"] }
        return Set(order.prefix(k))
    }

    static func mediator(
        hung: Set<String>, mode: PlacementConfiguration.Mode, sandbox: String, hanging: String, http: CurlHTTPClient,
        stubborn: Bool = false
    ) throws -> (Mediator, [BiddingNetwork]) {
        let bidders = (0..<10).map { i -> BiddingNetwork in
            let id = "b\(i)"
            var configuration = BiddingNetwork.Configuration(
                baseURL: (hung.contains(id) ? hanging : sandbox) + "/openrtb/" + id)
            configuration.id = id
            configuration.formats = [.banner]
            return BiddingNetwork(configuration: configuration, http: http)
        }
        let lines = (0..<10).map { i -> ChartboostNetwork in
            let id = "cb\(i)"
            var configuration = ChartboostNetwork.Configuration(
                baseURL: (hung.contains(id) ? hanging : sandbox) + "/chartboost", appID: "cb_app_demo",
                appSignature: "cb_sig_demo_secret")
            configuration.id = id
            return ChartboostNetwork(configuration: configuration, http: http)
        }
        // Lines priced above any sandbox bid (0.5–5), so every line is asked whatever the bids; the breaker off (its
        // highest threshold), so a hung source is asked on every auction: the worst case.
        // With `stubborn`, the hung sources are partner SDKs that ignore cancellation instead of hung sockets, in the
        // same places of the auction and the waterfall.
        func source(_ network: any AdNetwork) -> any AdNetwork {
            stubborn && hung.contains(network.id) ? StubbornNetwork(id: network.id) : network
        }
        let sources = bidders.map(source)
        let lineSources = lines.map(source)
        let placement = PlacementConfiguration(
            format: .banner(.standard), mode: mode,
            lines: lineSources.map {
                WaterfallLine(network: $0.id, placement: "bench_loc", timeout: lineTimeout, ecpm: 10)
            },
            deadline: deadline,
            bidders: sources.map { BidderLine(network: $0.id, placement: "bench_banner", timeout: bidderTimeout) })
        let configuration = MediationConfiguration(
            placements: ["p": placement], circuitBreaker: CircuitBreakerConfiguration(failureThreshold: 10_000))
        let networks: [any AdNetwork] = sources + lineSources
        return (try Mediator(networks: networks, configuration: configuration, logger: quiet), bidders)
    }

    /// The auction's outcome, or nil when it has not answered 2 s after the placement's deadline (it is then left
    /// running, unstructured, so one stuck auction does not stop the benchmark).
    static func bounded(_ mediator: Mediator, _ request: AdRequest) async -> MediationOutcome? {
        let box = Once()
        return await withCheckedContinuation { continuation in
            box.slot.withLock { $0 = continuation }
            Task {
                let outcome = await mediator.loadWithTrace(request)
                box.slot.withLock { $0.take() }?.resume(returning: outcome)
            }
            Task {
                try? await Task.sleep(for: deadline + .seconds(2))
                box.slot.withLock { $0.take() }?.resume(returning: nil)
            }
        }
    }

    static func run(auctions: Int, json: Bool) async throws {
        let (child, sandbox) = try startSandboxChild()
        defer { child.kill() }
        let hanging = try HangingPort()
        let http = CurlHTTPClient()
        var cells: [HungCell] = []
        let rows = [0, 1, 5, 19].map { ($0, false) } + [1, 5].map { ($0, true) }
        for (k, stubborn) in rows {
            for mode in [PlacementConfiguration.Mode.parallel, .sequential] {
                let (mediator, bidders) = try mediator(
                    hung: hungSources(k), mode: mode, sandbox: sandbox, hanging: hanging.baseURL, http: http,
                    stubborn: stubborn)
                let request = AdRequest(placement: "p", format: .banner(.standard))
                let kind = stubborn ? "ignores cancel" : "socket"
                progress("hung \(k) (\(kind)) \(mode.rawValue)")
                for _ in 0..<5 { _ = await bounded(mediator, request) }  // warm-up: connections
                let measured = await Task.detached {
                    var latencies: [Double] = []
                    var fills = 0
                    var stuck = 0
                    let cpu0 = cpuMicros()
                    for _ in 0..<auctions {
                        let start = ContinuousClock.now
                        guard let outcome = await bounded(mediator, request) else {
                            stuck += 1
                            continue
                        }
                        latencies.append((ContinuousClock.now - start).ms)
                        if case .success(.filled) = outcome.result { fills += 1 }
                    }
                    return (latencies, fills, (cpuMicros() - cpu0) / Double(auctions), stuck)
                }.value
                cells.append(
                    HungCell(
                        kind: kind, mode: mode.rawValue, hung: k, p50: percentile(measured.0, 0.5),
                        p99: percentile(measured.0, 0.99), max: measured.0.max() ?? 0, cpuPerAuction: measured.2,
                        fills: measured.1, auctions: auctions, stuck: measured.3))
                progress("hung \(k) \(mode.rawValue): measured; shutting the bidders down")
                for bidder in bidders { await bidder.shutdown() }
                await mediator.shutdown()  // the loads that ignore cancellation end in the background
            }
        }
        await http.shutdown()
        let goal = deadline.ms + 5
        if json {
            let rows = cells.map {
                [
                    "kind": $0.kind, "mode": $0.mode, "hung": $0.hung, "stuck": $0.stuck, "p50_ms": $0.p50,
                    "p99_ms": $0.p99,
                    "max_ms": $0.max,
                    "cpu_us_per_auction": $0.cpuPerAuction, "fills": $0.fills, "auctions": $0.auctions,
                ] as [String: Any]
            }
            let data = try JSONSerialization.data(withJSONObject: ["deadline_ms": deadline.ms, "cells": rows])
            print(String(decoding: data, as: UTF8.self))
            return
        }
        print(
            "20 sources (10 bidders, timeout \(Int(bidderTimeout.ms)) ms; 10 lines, timeout \(Int(lineTimeout.ms)) ms),"
                + " deadline \(Int(deadline.ms)) ms, \(auctions) auctions per row")
        print("")
        print(
            "| hung as | mode | hung | p50 ms | p99 ms | max ms | p99 ≤ deadline + 5 ms | CPU µs/auction | fills "
                + "| no answer after 2 s |"
        )
        print("|---|---|---|---|---|---|---|---|---|---|")
        for c in cells {
            let verdict = c.p99 <= goal ? "met" : "**missed**"
            print(
                "| \(c.kind) | \(c.mode) | \(c.hung) | \(fixed(c.p50)) | \(fixed(c.p99)) | \(fixed(c.max)) | "
                    + "\(verdict) | \(fixed(c.cpuPerAuction, 0)) | \(c.fills)/\(c.auctions) | \(c.stuck) |")
        }
    }
}

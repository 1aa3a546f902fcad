// `app-bench flood [auctions]` (issue 45): one OpenRTB bidder whose answers are huge beside a good waterfall line, in
// one run with the normal case. Rows: the bidder answers one bid (normal); 60 000 bids in 3.8 MB (over the bidder's
// 1 MiB answer bound); 15 000 bids just under 1 MiB (inside the bound, so decoding must stop at its seat and bid
// caps). Measured: decision latency against the placement's deadline, CPU per auction, and the good line's win share
// (the line is priced above every bid, so it should win every auction it fills whatever the bidder sends).
import AdMediation
import AdMediationTesting
import ChartboostBanners
import CurlTransport
import Foundation
import Logging
import OpenRTBBidder

enum FloodBench {
    static let deadline = Duration.milliseconds(400)
    static let quiet = Logger(label: "admediation.mediator", factory: { _ in SwiftLogNoOpLogHandler() })

    /// One row: how many bids the bidder's answer carries, and roughly how large it is.
    struct Row {
        let name: String
        let bids: Int
    }

    /// A bid answer of `count` bids in one seat for request `id` (each bid ~64 bytes), as one body.
    static func answer(id: String, count: Int) -> [UInt8] {
        var text = #"{"id":"\#(id)","cur":"USD","seatbid":[{"seat":"flood","bid":["#
        text.reserveCapacity(count * 70 + 100)
        for index in 0..<count {
            if index > 0 { text += "," }
            text += #"{"id":"b\#(index)","impid":"1","price":0.5,"adm":"<a/>","crid":"c\#(index)"}"#
        }
        text += "]}]}"
        return Array(text.utf8)
    }

    /// The request id of an OpenRTB request body (the answer must echo it).
    static func requestID(_ body: [UInt8]) -> String {
        let text = String(decoding: body.prefix(200), as: UTF8.self)
        guard let start = text.range(of: #""id":""#)?.upperBound, let end = text[start...].firstIndex(of: "\"")
        else { return "" }
        return String(text[start..<end])
    }

    static func run(auctions: Int, json: Bool) async throws {
        let (child, sandbox) = try startSandboxChild()
        defer { child.kill() }
        let rows = [
            Row(name: "normal", bids: 1), Row(name: "3.8 MB", bids: 60_000), Row(name: "< 1 MiB", bids: 15_000),
        ]
        let http = CurlHTTPClient()
        var lines: [String] = []
        var cells: [[String: Any]] = []
        for row in rows {
            let bids = row.bids
            let server = try LoopbackHTTPServer { request in
                .respond(
                    .init(
                        headers: [("Content-Type", "application/json")],
                        body: answer(id: requestID(request.body), count: bids)))
            }
            defer { server.stop() }
            var bidderConfiguration = BiddingNetwork.Configuration(baseURL: server.baseURL + "/bid")
            bidderConfiguration.id = "flood"
            bidderConfiguration.formats = [.banner]
            let bidder = BiddingNetwork(configuration: bidderConfiguration, http: http)
            var lineConfiguration = ChartboostNetwork.Configuration(
                baseURL: sandbox + "/chartboost", appID: "cb_app_demo", appSignature: "cb_sig_demo_secret")
            lineConfiguration.id = "good"
            let line = ChartboostNetwork(configuration: lineConfiguration, http: http)
            let placement = PlacementConfiguration(
                format: .banner(.standard),
                lines: [WaterfallLine(network: "good", placement: "bench_loc", timeout: .milliseconds(300), ecpm: 10)],
                deadline: deadline,
                bidders: [BidderLine(network: "flood", placement: "bench_banner", timeout: .milliseconds(200))])
            let mediator = try Mediator(
                networks: [bidder, line],
                configuration: MediationConfiguration(
                    placements: ["p": placement],
                    circuitBreaker: CircuitBreakerConfiguration(failureThreshold: 10_000)),
                logger: quiet)
            let request = AdRequest(placement: "p", format: .banner(.standard))
            progress("flood \(row.name): \(bids) bids per answer (\(answer(id: "x", count: bids).count) bytes)")
            for _ in 0..<5 { _ = await HungBench.bounded(mediator, request) }  // warm-up: connections
            let measured = await Task.detached {
                var latencies: [Double] = []
                var goodWins = 0
                var bidWins = 0
                var stuck = 0
                let cpu0 = cpuMicros()
                for _ in 0..<auctions {
                    let start = ContinuousClock.now
                    guard let outcome = await HungBench.bounded(mediator, request) else {
                        stuck += 1
                        continue
                    }
                    latencies.append((ContinuousClock.now - start).ms)
                    if case .success(.filled(let ad)) = outcome.result {
                        if ad.networkID == "good" { goodWins += 1 } else { bidWins += 1 }
                    }
                }
                return (latencies, goodWins, bidWins, (cpuMicros() - cpu0) / Double(auctions), stuck)
            }.value
            await bidder.shutdown()
            await line.shutdown()
            await mediator.shutdown()
            let (p50, p99) = (percentile(measured.0, 0.5), percentile(measured.0, 0.99))
            let share = Double(measured.1) / Double(max(1, auctions))
            cells.append([
                "row": row.name, "bids": bids, "p50_ms": p50, "p99_ms": p99, "max_ms": measured.0.max() ?? 0,
                "good_line_win_share": share, "bid_wins": measured.2, "cpu_us_per_auction": measured.3,
                "auctions": auctions, "stuck": measured.4,
            ])
            let verdict = p99 <= deadline.ms + 5 ? "met" : "**missed**"
            lines.append(
                "| \(row.name) | \(bids) | \(fixed(p50)) | \(fixed(p99)) | \(fixed(measured.0.max() ?? 0)) "
                    + "| \(verdict) | \(fixed(share * 100)) % | \(measured.2) | \(fixed(measured.3, 0)) "
                    + "| \(measured.4) |")
        }
        await http.shutdown()
        if json {
            let data = try JSONSerialization.data(withJSONObject: ["deadline_ms": deadline.ms, "cells": cells])
            print(String(decoding: data, as: UTF8.self))
            return
        }
        print(
            "one bidder (timeout 200 ms) + one Chartboost line priced above its bids, deadline 400 ms, "
                + "\(auctions) auctions")
        print("")
        print(
            "| answer | bids | p50 ms | p99 ms | max ms | p99 ≤ deadline + 5 ms | good line's win share | bid wins "
                + "| CPU µs/auction | no answer after 2 s |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for line in lines { print(line) }
    }
}

// Mediator benchmark: CPU overhead per line per request with in-process scripted networks (no latency), and
// decision latency of parallel vs sequential waterfalls with scripted line latencies, in one run.
import AdMediation
import AdMediationTesting
import AdNetworkConformance
import BenchSupport
import Foundation
import Logging

// Usage: mediator-bench [iterations] [--json] [--overhead-only]. The mediator logs nowhere here (a no-op handler), so
// the figure is the mediator's own work; with swift-log's default stderr handler each decision also formats and writes
// one line.
let json = CommandLine.arguments.contains("--json")
let positional = CommandLine.arguments.dropFirst().filter { !$0.hasPrefix("--") }
let quiet = Logger(label: "admediation.mediator", factory: { _ in SwiftLogNoOpLogHandler() })

func cpuMicros() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1e6
        + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec)
}

let request = AdRequest(placement: "p", format: .interstitial)

// 1. Overhead: 4 lines, the last fills at once; compare with calling the 4 networks directly in sequence.
let lineCount = 4
let iterations = Int(positional.first ?? "") ?? 20_000
let networks = (0..<lineCount).map { i in InstantNetwork(id: "n\(i)", fills: i == lineCount - 1) }
let configuration = MediationConfiguration(placements: [
    "p": PlacementConfiguration(
        format: .interstitial, lines: (0..<lineCount).map { WaterfallLine(network: "n\($0)", placement: "x") })
])
let mediator = try Mediator(networks: networks, configuration: configuration, logger: quiet)
for _ in 0..<1000 { _ = try await mediator.load(request) }

// Measured from a task on the cooperative pool, as in a server or `mediate compare`, so no call hops between the main
// thread and the pool (top-level code is on the main actor: there, each of the four direct calls would pay two thread
// hand-offs and dominate the baseline).
let (directCPU, mediatedCPU) = try await Task.detached {
    var cpu0 = cpuMicros()
    for _ in 0..<iterations {
        for network in networks { _ = try await network.load(AdRequest(placement: "x", format: .interstitial)) }
    }
    let direct = (cpuMicros() - cpu0) / Double(iterations)
    cpu0 = cpuMicros()
    for _ in 0..<iterations { _ = try await mediator.load(request) }
    return (direct, (cpuMicros() - cpu0) / Double(iterations))
}.value
let perLine = (mediatedCPU - directCPU) / Double(lineCount)
// `--overhead-only`: stop here, for counting allocations from outside (see docs/BENCHMARKS.md): the process then runs
// only the warm-up and the two loops above.
if CommandLine.arguments.contains("--overhead-only") {
    print(String(format: "%.2f", perLine))
    exit(0)
}

// 2. Decision latency: lines answer no fill after 40, 80, 120 ms; line 4 fills after 20 ms.
let latencies: [Int] = [40, 80, 120, 20]
func latencyMediator(_ mode: PlacementConfiguration.Mode) throws -> Mediator {
    let nets = latencies.enumerated().map { i, ms in
        ScriptedAdNetwork(
            id: "l\(i)",
            fallback: i == latencies.count - 1 ? .fill(latency: .milliseconds(ms)) : .noFill(latency: .milliseconds(ms))
        )
    }
    return try Mediator(
        networks: nets,
        configuration: MediationConfiguration(placements: [
            "p": PlacementConfiguration(
                format: .interstitial, mode: mode, lines: nets.map { WaterfallLine(network: $0.id, placement: "x") })
        ]), logger: quiet)
}
var decision: [String: [Double]] = [:]
// Baseline: how late a bare 120 ms sleep wakes on this machine (the lines' own timer overshoot).
for _ in 0..<20 {
    let start = ContinuousClock.now
    try await Task.sleep(for: .milliseconds(120))
    decision["bare-sleep", default: []].append((ContinuousClock.now - start).milliseconds)
}
for mode in [PlacementConfiguration.Mode.parallel, .sequential] {
    let m = try latencyMediator(mode)
    for _ in 0..<20 {
        let start = ContinuousClock.now
        let outcome = await m.loadWithTrace(request)
        precondition(outcome.trace.winnerIndex == 3)
        decision[mode.rawValue, default: []].append((ContinuousClock.now - start).milliseconds)
    }
}
// 3. The unified auction (issue 32): two bidders, then the two lines priced above the best bid. CPU with instant
// networks (bids at 1.0; lines priced 5.0, the first no fill, the second fills at 1.0 and wins the tie); decision
// latency with bids after 30 and 50 ms and the lines after 40 (no fill) and 20 ms (fill): about 50 + 40 = 90 ms.
func auctionPlacement(_ bidders: [String], _ lines: [String]) -> MediationConfiguration {
    MediationConfiguration(placements: [
        "p": PlacementConfiguration(
            format: .interstitial, lines: lines.map { WaterfallLine(network: $0, placement: "x", ecpm: 5.0) },
            bidders: bidders.map { BidderLine(network: $0, placement: "x") })
    ])
}
let auctionNetworks = [("b0", true), ("b1", true), ("a0", false), ("a1", true)].map {
    InstantNetwork(id: $0, fills: $1)
}
let auctionMediator = try Mediator(
    networks: auctionNetworks, configuration: auctionPlacement(["b0", "b1"], ["a0", "a1"]), logger: quiet)
for _ in 0..<1000 { _ = try await auctionMediator.load(request) }
let auctionCPU = try await Task.detached {
    let cpu0 = cpuMicros()
    for _ in 0..<iterations { _ = try await auctionMediator.load(request) }
    return (cpuMicros() - cpu0) / Double(iterations)
}.value
let timedAuction = try Mediator(
    networks: [
        ScriptedAdNetwork(id: "b0", fallback: .fill(ecpm: 2.0, latency: .milliseconds(30))),
        ScriptedAdNetwork(id: "b1", fallback: .fill(ecpm: 3.0, latency: .milliseconds(50))),
        ScriptedAdNetwork(id: "a0", fallback: .noFill(latency: .milliseconds(40))),
        ScriptedAdNetwork(id: "a1", fallback: .fill(ecpm: 4.0, latency: .milliseconds(20))),
    ], configuration: auctionPlacement(["b0", "b1"], ["a0", "a1"]), logger: quiet)
for _ in 0..<20 {
    let start = ContinuousClock.now
    let outcome = await timedAuction.loadWithTrace(request)
    precondition(outcome.trace.winnerIndex == 1)
    decision["auction", default: []].append((ContinuousClock.now - start).milliseconds)
}
func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

if json {
    let object: [String: Double] = [
        "direct_cpu_us_per_request": directCPU, "mediated_cpu_us_per_request": mediatedCPU,
        "overhead_us_per_line": perLine,
        "decision_parallel_ms": median(decision["parallel"]!),
        "decision_sequential_ms": median(decision["sequential"]!),
        "bare_sleep_120ms_ms": median(decision["bare-sleep"]!),
        "auction_cpu_us_per_request": auctionCPU, "decision_auction_ms": median(decision["auction"]!),
    ]
    let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
    print(String(decoding: data, as: UTF8.self))
    exit(0)
}
print("| measure | value |")
print("|---|---|")
print(String(format: "| 4 instant networks called directly, CPU µs per request | %.2f |", directCPU))
print(String(format: "| same 4 networks through the Mediator, CPU µs per request | %.2f |", mediatedCPU))
print(String(format: "| mediator overhead per line per request (µs) | %.2f |", perLine))
print(
    String(
        format: "| decision latency, parallel (lines 40/80/120 ms no fill, line 4 fills at 20 ms), median ms | %.1f |",
        median(decision["parallel"]!)))
print(
    String(format: "| decision latency, sequential (same lines), median ms | %.1f |", median(decision["sequential"]!)))
print(
    String(
        format: "| a bare 120 ms sleep on this machine (timer overshoot baseline), median ms | %.1f |",
        median(decision["bare-sleep"]!)))
print(
    String(format: "| unified auction, 2 instant bidders + 2 instant lines, CPU µs per request | %.2f |", auctionCPU))
print(
    String(
        format: "| decision latency, auction (bids at 30/50 ms, lines 40 ms no fill / 20 ms fill), median ms | %.1f |",
        median(decision["auction"]!)))
print(
    String(
        format: "| parallel decision minus the bare-sleep baseline (mediator's own delay), ms | %.2f |",
        median(decision["parallel"]!) - median(decision["bare-sleep"]!)))

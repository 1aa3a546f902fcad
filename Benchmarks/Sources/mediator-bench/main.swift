// Mediator benchmark: CPU overhead per line per request with in-process scripted networks (no latency), and
// decision latency of parallel vs sequential waterfalls with scripted line latencies, in one run.
import AdMediation
import AdNetworkConformance
import Foundation

func cpuMicros() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1e6 + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec)
}

let request = AdRequest(placement: "p", format: .interstitial)

// 1. Overhead: 4 lines, the last fills at once; compare with calling the 4 networks directly in sequence.
let lineCount = 4
let iterations = Int(CommandLine.arguments.dropFirst().first ?? "") ?? 20_000
let networks = (0..<lineCount).map { i in
    ScriptedAdNetwork(id: "n\(i)", fallback: i == lineCount - 1 ? .fill(ecpm: 1) : .noFill())
}
let configuration = MediationConfiguration(placements: [
    "p": PlacementConfiguration(format: "interstitial", lines: (0..<lineCount).map { WaterfallLine(network: "n\($0)", placement: "x") }),
])
let mediator = try Mediator(networks: networks, configuration: configuration)
for _ in 0..<1000 { _ = try await mediator.load(request) }

var cpu0 = cpuMicros()
for _ in 0..<iterations {
    for network in networks { _ = try await network.load(AdRequest(placement: "x", format: .interstitial)) }
}
let directCPU = (cpuMicros() - cpu0) / Double(iterations)

cpu0 = cpuMicros()
for _ in 0..<iterations { _ = try await mediator.load(request) }
let mediatedCPU = (cpuMicros() - cpu0) / Double(iterations)
let perLine = (mediatedCPU - directCPU) / Double(lineCount)

// 2. Decision latency: lines answer no fill after 40, 80, 120 ms; line 4 fills after 20 ms.
let latencies: [Int] = [40, 80, 120, 20]
func latencyMediator(_ mode: PlacementConfiguration.Mode) throws -> Mediator {
    let nets = latencies.enumerated().map { i, ms in
        ScriptedAdNetwork(id: "l\(i)", fallback: i == latencies.count - 1 ? .fill(latency: .milliseconds(ms)) : .noFill(latency: .milliseconds(ms)))
    }
    return try Mediator(networks: nets, configuration: MediationConfiguration(placements: [
        "p": PlacementConfiguration(format: "interstitial", mode: mode, lines: nets.map { WaterfallLine(network: $0.id, placement: "x") }),
    ]))
}
var decision: [String: [Double]] = [:]
for mode in [PlacementConfiguration.Mode.parallel, .sequential] {
    let m = try latencyMediator(mode)
    for _ in 0..<20 {
        let start = ContinuousClock.now
        let outcome = await m.loadWithTrace(request)
        precondition(outcome.trace.winnerIndex == 3)
        decision[mode.rawValue, default: []].append((ContinuousClock.now - start).milliseconds)
    }
}
func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

print("| measure | value |")
print("|---|---|")
print(String(format: "| 4 scripted networks called directly, CPU µs per request | %.2f |", directCPU))
print(String(format: "| same 4 networks through the Mediator, CPU µs per request | %.2f |", mediatedCPU))
print(String(format: "| mediator overhead per line per request (µs) | %.2f |", perLine))
print(String(format: "| decision latency, parallel (lines 40/80/120 ms no fill, line 4 fills at 20 ms), median ms | %.1f |", median(decision["parallel"]!)))
print(String(format: "| decision latency, sequential (same lines), median ms | %.1f |", median(decision["sequential"]!)))
print(String(format: "| parallel target = max(above) = 120 ms + ≤ 1 ms; measured excess ms | %.2f |", median(decision["parallel"]!) - 120))

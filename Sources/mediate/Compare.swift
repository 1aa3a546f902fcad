import AdMediation
import Foundation
import Histogram
import MediateKit

/// Results of one set of requests (the waterfall, or one network alone).
struct Tally: Sendable {
    var requests = 0
    var fills = 0
    var wins: [String: Int] = [:]
    var errors: [String: Int] = [:]
    var latency = Histogram<UInt64>(highestTrackableValue: 600_000_000, numberOfSignificantValueDigits: .three)

    mutating func record(latency: Duration, filled: Bool, error: AdError?) {
        requests += 1
        if filled { fills += 1 }
        if let error { errors[error.code.name, default: 0] += 1 }
        _ = self.latency.record(UInt64(max(1, latency.nanosecondsClamped / 1000)))
    }

    var fillRate: Double { requests == 0 ? 0 : Double(fills) / Double(requests) }

    func percentileMs(_ p: Double) -> Double {
        latency.totalCount == 0 ? 0 : Double(latency.valueAtPercentile(p)) / 1000
    }

    var latencyJSON: [String: Double] {
        ["p50": round3(percentileMs(50)), "p95": round3(percentileMs(95)), "p99": round3(percentileMs(99))]
    }
}

func round3(_ value: Double) -> Double { (value * 1000).rounded() / 1000 }

/// One placement's comparison.
struct PlacementReport: Sendable {
    var id: String
    var mediated: Tally
    var lines: [(network: String, placement: String, tally: Tally)]
}

/// Runs the comparison: per placement, N mediated requests and N requests to each line's network alone.
struct CompareRunner {
    let configuration: CLIConfiguration
    let networks: [String: any AdNetwork]
    let mediator: Mediator
    let requests: Int
    let concurrency: Int
    let progress: Progress

    func run(placements: [String]) async -> [PlacementReport] {
        var reports: [PlacementReport] = []
        for id in placements {
            guard let placement = configuration.mediation.placements[id], let format = placement.adFormat else { continue }
            let mediatedRequest = AdRequest(placement: id, format: format, testMode: true)
            let mediated = await measure(label: "\(id) (waterfall)") { () async -> (Bool, AdError?, String?) in
                let outcome = await mediator.loadWithTrace(mediatedRequest)
                switch outcome.result {
                case .success(let result):
                    result.ad?.invalidate()
                    return (result.ad != nil, nil, outcome.trace.winnerIndex.map(String.init))
                case .failure(let error):
                    return (false, error, nil)
                }
            }
            var lines: [(String, String, Tally)] = []
            for line in placement.lines {
                guard let network = networks[line.network] else { continue }
                let request = AdRequest(placement: line.placement, format: format, testMode: true, timeout: .milliseconds(line.timeoutMs))
                let tally = await measure(label: "\(id) → \(line.network)/\(line.placement)") { () async -> (Bool, AdError?, String?) in
                    do {
                        let result = try await network.load(request)
                        result.ad?.invalidate()
                        return (result.ad != nil, nil, nil)
                    } catch let error as AdError {
                        return (false, error, nil)
                    } catch {
                        return (false, AdError(.network, "\(error)"), nil)
                    }
                }
                lines.append((line.network, line.placement, tally))
            }
            reports.append(PlacementReport(id: id, mediated: mediated, lines: lines))
        }
        return reports
    }

    /// Runs `requests` calls of `call` with `concurrency` workers, recording latency, fill, errors and winners.
    private func measure(label: String, _ call: @escaping @Sendable () async -> (Bool, AdError?, String?)) async -> Tally {
        let total = requests
        let workers = max(1, min(concurrency, total))
        let counter = ProgressCounter(total: total, label: label, progress: progress)
        return await withTaskGroup(of: Tally.self) { group in
            for worker in 0..<workers {
                group.addTask {
                    var tally = Tally()
                    var i = worker
                    while i < total {
                        let start = ContinuousClock.now
                        let (filled, error, winner) = await call()
                        tally.record(latency: ContinuousClock.now - start, filled: filled, error: error)
                        if let winner { tally.wins[winner, default: 0] += 1 }
                        counter.tick()
                        i += workers
                    }
                    return tally
                }
            }
            var merged = Tally()
            for await part in group {
                merged.requests += part.requests
                merged.fills += part.fills
                for (k, v) in part.wins { merged.wins[k, default: 0] += v }
                for (k, v) in part.errors { merged.errors[k, default: 0] += v }
                merged.latency.add(part.latency)
            }
            counter.finish()
            return merged
        }
    }
}

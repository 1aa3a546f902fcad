import AdMediation
import Foundation
import MediateKit

/// One arm of `compare --arms`: a variant of a placement's configuration.
enum Arm: String, CaseIterable, Sendable {
    /// The configured order, never learned.
    case `static`
    /// The self-ordering waterfall (the placement's optimizer settings, or the defaults with seed 1).
    case optimized
    /// Waterfall lines only: the bidders removed.
    case waterfall
    /// The unified auction: bidders and lines as configured.
    case auction

    /// `placement` as this arm runs it. Throws when the arm cannot apply (a waterfall arm without lines).
    func apply(to placement: PlacementConfiguration, id: String) throws(AdError) -> PlacementConfiguration {
        var variant = placement
        switch self {
        case .static: variant.optimizer = nil
        case .optimized: variant.optimizer = placement.optimizer ?? OptimizerConfiguration(seed: 1)
        case .waterfall:
            guard !placement.lines.isEmpty else {
                throw AdError(.configuration, "--arms waterfall: placement \(id) has no waterfall lines")
            }
            variant.bidders = []
        case .auction:
            guard !placement.bidders.isEmpty else {
                throw AdError(.configuration, "--arms auction: placement \(id) has no bidders")
            }
        }
        variant.abLabel = rawValue
        return variant
    }

    /// Parses `static,optimized`: two or more distinct known arms.
    static func parse(_ text: String) throws(AdError) -> [Arm] {
        var arms: [Arm] = []
        for name in text.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) {
            guard let arm = Arm(rawValue: name) else {
                throw AdError(
                    .configuration,
                    "--arms: unknown arm \"\(name.prefix(40))\" (one of "
                        + "\(allCases.map(\.rawValue).joined(separator: ", ")))"
                )
            }
            if arms.contains(arm) { throw AdError(.configuration, "--arms: \(name) is given twice") }
            arms.append(arm)
        }
        guard arms.count >= 2 else {
            throw AdError(.configuration, "--arms: give at least two arms, such as static,optimized")
        }
        return arms
    }
}

/// Runs the arms of one placement on the same traffic: request *i* goes to arm *i mod n*, from the same workers, so
/// every arm sees the same demand at the same moment (drift included). Each arm has its own mediator over the same
/// networks, and its own tally.
struct ArmsRunner {
    let configuration: CLIConfiguration
    let networks: [String: any AdNetwork]
    let requests: Int
    let concurrency: Int
    let progress: Progress
    /// The privacy signals every request carries (`--gdpr`, `--tcf`, …).
    var privacy = PrivacySignals()

    func run(placement id: String, arms: [Arm]) async throws(AdError) -> [(arm: Arm, tally: Tally)] {
        guard let placement = configuration.mediation.placements[id] else {
            throw AdError(.configuration, "--placement: unknown placement \"\(id)\"")
        }
        let format = placement.format
        var mediators: [Mediator] = []
        for arm in arms {
            var mediation = configuration.mediation
            mediation.placements = [id: try arm.apply(to: placement, id: id)]
            mediators.append(
                try Mediator(
                    id: "arm-\(arm.rawValue)", networks: Array(networks.values), configuration: mediation,
                    privacy: configuration.privacy))
        }
        let request = AdRequest(placement: id, format: format, privacy: privacy, testMode: true)
        let armMediators = mediators
        let total = requests * arms.count
        let workers = max(1, min(concurrency, total))
        let counter = ProgressCounter(
            total: total, label: "\(id) arms \(arms.map(\.rawValue).joined(separator: ","))", progress: progress)
        let runStart = ContinuousClock.now
        let tallies = await withTaskGroup(of: [Tally].self) { group in
            for worker in 0..<workers {
                group.addTask {
                    var tallies = Array(repeating: Tally(), count: arms.count)
                    var i = worker
                    while i < total {
                        let arm = i % arms.count
                        let start = ContinuousClock.now
                        let sample = Sample(await armMediators[arm].loadWithTrace(request))
                        let end = ContinuousClock.now
                        tallies[arm].record(
                            latency: end - start, second: Int((end - runStart).components.seconds), sample)
                        counter.tick()
                        i += workers
                    }
                    return tallies
                }
            }
            var merged = Array(repeating: Tally(), count: arms.count)
            for await part in group {
                for index in part.indices { merged[index].merge(part[index]) }
            }
            counter.finish()
            return merged
        }
        return Array(zip(arms, tallies)).map { (arm: $0.0, tally: $0.1) }
    }

    /// Each arm's 95 % intervals (fill: Wilson; revenue per 1000 requests: normal approximation of the mean of
    /// per-request revenue) and, against the first arm, the interval of each difference and whether it is
    /// significant (its interval excludes 0).
    struct Confidence: Sendable {
        var fill: Statistics.Interval?
        var revenue: Statistics.Interval?
        var fillDifference: Statistics.Interval?
        var revenueDifference: Statistics.Interval?

        init(_ tally: Tally, first: Tally?) {
            fill = Statistics.wilson(successes: tally.fills, trials: tally.requests)
            revenue = Statistics.meanInterval(
                count: tally.requests, sum: tally.revenue, squares: tally.revenueSquares, scale: 1000)
            if let first {
                fillDifference = Statistics.proportionDifference(
                    (first.fills, first.requests), (tally.fills, tally.requests))
                revenueDifference = Statistics.meanDifference(
                    (first.requests, first.revenue, first.revenueSquares),
                    (tally.requests, tally.revenue, tally.revenueSquares), scale: 1000)
            }
        }
    }

    /// The lines under an arms table: each arm's intervals, then each later arm against the first.
    static func confidenceLines(_ arms: [(arm: Arm, tally: Tally)]) -> [String] {
        func range(_ interval: Statistics.Interval?, _ format: String) -> String {
            interval.map { "[" + String(format: format, $0.low) + ", " + String(format: format, $0.high) + "]" } ?? "-"
        }
        var lines = ["  95 % CI    fill              rev/1000"]
        for (arm, tally) in arms {
            let ci = Confidence(tally, first: nil)
            let fill = range(ci.fill.map { .init(low: $0.low * 100, high: $0.high * 100) }, "%.1f%%")
            lines.append(
                "  " + arm.rawValue.padding(toLength: 10, withPad: " ", startingAt: 0) + " "
                    + fill.padding(toLength: 17, withPad: " ", startingAt: 0) + " " + range(ci.revenue, "%.3f"))
        }
        guard let first = arms.first else { return lines }
        for (arm, tally) in arms.dropFirst() {
            let ci = Confidence(tally, first: first.tally)
            let name = "\(arm.rawValue) − \(first.arm.rawValue)"
            if let difference = ci.fillDifference {
                lines.append(
                    "  \(name): fill "
                        + String(
                            format: "%+.1f pts (CI %+.1f…%+.1f): ", (tally.fillRate - first.tally.fillRate) * 100,
                            difference.low * 100, difference.high * 100)
                        + (difference.containsZero ? "not significant" : "significant"))
            }
            if let difference = ci.revenueDifference {
                lines.append(
                    "  \(name): rev/1000 "
                        + String(
                            format: "%+.3f (CI %+.3f…%+.3f): ", tally.revenuePerMille - first.tally.revenuePerMille,
                            difference.low, difference.high)
                        + (difference.containsZero ? "not significant" : "significant"))
            }
        }
        return lines
    }

    /// A table, or JSON: per arm, requests, fill rate, estimated revenue per 1000 requests, p50/p95/p99 decision
    /// latency, each with its 95 % interval; and each arm's revenue relative to the first arm, the differences'
    /// intervals and whether each is significant.
    static func render(_ results: [(placement: String, arms: [(arm: Arm, tally: Tally)])], json: Bool) -> String {
        if json {
            // Slashes escaped (`\/`), as this output has always written them.
            return ReportJSON.text(ArmsReport(results), escapingSlashes: true)
        }
        var lines: [String] = []
        for placement in results {
            lines.append("placement \(placement.placement)")
            lines.append("  arm        requests   fill   rev/1000   vs first   p50 ms   p95 ms   p99 ms")
            let base = placement.arms.first?.tally.revenuePerMille ?? 0
            for (arm, tally) in placement.arms {
                let ratio = base > 0 ? String(format: "%.3f", tally.revenuePerMille / base) : "-"
                let name = arm.rawValue.padding(toLength: 10, withPad: " ", startingAt: 0)
                let vs = String(repeating: " ", count: max(0, 9 - ratio.count)) + ratio
                lines.append(
                    "  \(name)"
                        + String(
                            format: " %8d  %5.1f%%  %9.3f  ", tally.requests, tally.fillRate * 100,
                            tally.revenuePerMille) + vs
                        + String(
                            format: "  %7.2f  %7.2f  %7.2f", tally.percentileMs(50), tally.percentileMs(95),
                            tally.percentileMs(99)))
            }
            lines += confidenceLines(placement.arms)
        }
        return lines.joined(separator: "\n")
    }
}

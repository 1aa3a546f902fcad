import AdMediation
import Foundation
import Histogram
import MediateKit

/// One request's answer, as the comparison records it.
struct Sample: Sendable {
    var filled = false
    var error: AdError?
    /// The winning line's index, for a mediated request.
    var winner: Int?
    /// What the fill's impression would earn.
    var revenue: ImpressionRevenue?
    /// The A/B label the mediated request ran under, if any.
    var abLabel: String?

    /// A fill of a network asked alone that did not price it takes its line's publisher-defined `linePrice`, as the
    /// mediator would.
    init(_ ad: LoadedAd?, winner: Int? = nil, linePrice: Double? = nil) {
        filled = ad != nil
        revenue = ad?.revenue
        if let ad, ad.ecpm == nil, let linePrice {
            revenue = ImpressionRevenue(
                value: linePrice / 1000, precision: .publisherDefined, networkID: ad.networkID, placement: ad.placement)
        }
        self.winner = winner
    }

    init(error: AdError) { self.error = error }

    /// When every line and bidder of a mediated request failed (an error, a timeout, or skipped by an open breaker,
    /// which only failures open), the error of the first one that answered with an error (a timeout's is `timeout`;
    /// `breaker_open` when every line was skipped by its breaker: refused unsent, not a network error): a request
    /// nobody could answer is an error of the waterfall, not a no-fill. Nil when any line or bidder answered, filled
    /// or not.
    static func everyLineFailed(_ trace: MediationTrace) -> AdError? {
        let outcomes = trace.lines.map(\.outcome) + trace.bids.map(\.outcome)
        guard !outcomes.isEmpty else { return nil }
        var first: AdError?
        for outcome in outcomes {
            switch outcome {
            case .error(let error): first = first ?? error
            case .timeout: first = first ?? AdError(.timeout, "timed out")
            case .skipped(.breakerOpen): continue
            default: return nil
            }
        }
        return first ?? AdError(.breakerOpen, "every line skipped: its circuit breaker was open (earlier failures)")
    }

    /// When the privacy rules blocked every line and bidder of a mediated request, a `privacy_blocked` error with the
    /// first one's reason: the request was never sent, which says why the waterfall did not fill. Nil otherwise.
    static func everyLineBlocked(_ trace: MediationTrace) -> AdError? {
        let blocked = LineOutcome.skipped(.privacyBlocked)
        let reasons =
            trace.lines.map { ($0.outcome, $0.privacyReason) } + trace.bids.map { ($0.outcome, $0.privacyReason) }
        guard !reasons.isEmpty, reasons.allSatisfy({ $0.0 == blocked }) else { return nil }
        return AdError(.privacyBlocked, reasons.first?.1 ?? "blocked by the privacy rules")
    }

    /// A mediated request's sample: its fill (invalidated: it is never shown), winning line, error and A/B label.
    init(_ outcome: MediationOutcome) {
        switch outcome.result {
        case .success(let result):
            result.ad?.invalidate()
            self.init(result.ad, winner: result.ad == nil ? nil : outcome.trace.winnerIndex)
            if result.ad == nil,
                let failure = Self.everyLineFailed(outcome.trace) ?? Self.everyLineBlocked(outcome.trace)
            {
                error = failure
            }
        case .failure(let error):
            self.init(error: error)
        }
        abLabel = outcome.trace.abLabel
    }
}

/// Results of one set of requests (the waterfall, or one network alone).
struct Tally: Sendable {
    /// Fill over time is kept per second of the run, up to this many seconds (later requests count in the last one).
    static let timelineSeconds = 86_400

    var requests = 0
    var fills = 0
    var wins: [String: Int] = [:]
    /// Estimated revenue won by each line index (US dollars), for a waterfall.
    var winRevenue: [String: Double] = [:]
    var errors: [String: Int] = [:]
    /// Requests the privacy rules blocked (counted under `privacy_blocked` in ``errors`` too), by the rules' reason.
    var blockReasons: [String: Int] = [:]
    /// Estimated revenue of every fill, had each been shown once (US dollars).
    var revenue = 0.0
    /// The sum of each request's revenue squared (a request without a fill earns 0): with ``revenue`` and
    /// ``requests``, the variance behind the confidence interval of revenue per 1000 requests.
    var revenueSquares = 0.0
    /// Fills by revenue precision (`estimated`, `publisher_defined`, …).
    var precisions: [String: Int] = [:]
    /// Requests, fills and revenue by A/B label (placements with a label or arms).
    var labels: [String: (requests: Int, fills: Int, revenue: Double)] = [:]
    /// Requests and fills by second since the start of the run.
    var timeline: [Int: (requests: Int, fills: Int)] = [:]
    /// Latencies in microseconds kept as a plain list while there are at most ``listedLatencies`` (8 bytes each):
    /// a source of a short run never allocates a histogram (about 190 KB at three significant digits, whatever
    /// `--requests` is; issue 45: 990 placements × 9 lines with `--requests 1` took 1.78 GB). Past the limit they go
    /// into ``histogram``, whose size does not grow with the run.
    private var listed: [UInt64] = []
    /// The latencies once there were more than ``listedLatencies``.
    private var histogram: Histogram<UInt64>?

    /// The most latencies a tally keeps as a list (32 KB) before it moves them into a histogram.
    static let listedLatencies = 4096

    private static func emptyHistogram() -> Histogram<UInt64> {
        Histogram<UInt64>(highestTrackableValue: 600_000_000, numberOfSignificantValueDigits: .three)
    }

    /// The histograms this tally holds (0 or 1): what its latencies cost beyond the list.
    var histogramCount: Int { histogram == nil ? 0 : 1 }

    /// Latencies held in the plain list.
    var listedCount: Int { listed.count }

    /// Moves the list into the histogram once it is past ``listedLatencies``, or at once when a histogram exists.
    private mutating func spillIfNeeded() {
        guard histogram != nil || listed.count > Self.listedLatencies else { return }
        var all = histogram ?? Self.emptyHistogram()
        for value in listed { _ = all.record(value) }
        listed = []
        histogram = all
    }

    mutating func record(latency: Duration, second: Int, _ sample: Sample) {
        requests += 1
        if sample.filled { fills += 1 }
        if let error = sample.error {
            errors[error.code.name, default: 0] += 1
            if error.code == .privacyBlocked { blockReasons[error.message, default: 0] += 1 }
        }
        if let revenue = sample.revenue {
            self.revenue += revenue.value
            revenueSquares += revenue.value * revenue.value
            precisions[revenue.precision.rawValue, default: 0] += 1
        }
        if let label = sample.abLabel {
            labels[label, default: (0, 0, 0)].requests += 1
            if sample.filled { labels[label, default: (0, 0, 0)].fills += 1 }
            labels[label, default: (0, 0, 0)].revenue += sample.revenue?.value ?? 0
        }
        if let winner = sample.winner {
            wins["\(winner)", default: 0] += 1
            winRevenue["\(winner)", default: 0] += sample.revenue?.value ?? 0
        }
        let bucket = min(max(second, 0), Self.timelineSeconds - 1)
        timeline[bucket, default: (0, 0)].requests += 1
        if sample.filled { timeline[bucket, default: (0, 0)].fills += 1 }
        listed.append(UInt64(max(1, latency.nanosecondsClamped / 1000)))
        if listed.count > Self.listedLatencies { spillIfNeeded() }
    }

    mutating func merge(_ other: Tally) {
        requests += other.requests
        fills += other.fills
        revenue += other.revenue
        revenueSquares += other.revenueSquares
        for (k, v) in other.wins { wins[k, default: 0] += v }
        for (k, v) in other.winRevenue { winRevenue[k, default: 0] += v }
        for (k, v) in other.errors { errors[k, default: 0] += v }
        for (k, v) in other.blockReasons { blockReasons[k, default: 0] += v }
        for (k, v) in other.precisions { precisions[k, default: 0] += v }
        for (k, v) in other.labels {
            labels[k, default: (0, 0, 0)].requests += v.requests
            labels[k, default: (0, 0, 0)].fills += v.fills
            labels[k, default: (0, 0, 0)].revenue += v.revenue
        }
        for (k, v) in other.timeline {
            timeline[k, default: (0, 0)].requests += v.requests
            timeline[k, default: (0, 0)].fills += v.fills
        }
        listed += other.listed
        if let theirs = other.histogram {
            var merged = histogram ?? Self.emptyHistogram()
            merged.add(theirs)
            histogram = merged
        }
        spillIfNeeded()
    }

    var fillRate: Double { requests == 0 ? 0 : Double(fills) / Double(requests) }

    /// Requests that failed: every error but `privacy_blocked` (the privacy rules refused to ask the network: the
    /// user's signals, not a failure of the network).
    var failures: Int {
        errors.filter { $0.key != AdError.Code.privacyBlocked.name }.values.reduce(0, +)
    }

    /// Estimated revenue per 1000 requests (US dollars): what MAX calls RPM.
    var revenuePerMille: Double { requests == 0 ? 0 : revenue / Double(requests) * 1000 }

    /// The latency at percentile `p` (0…100) in milliseconds; 0 without requests. From the list, the value the
    /// histogram would rank there (the `⌈p % × count⌉`-th, HdrHistogram's rule), exactly.
    func percentileMs(_ p: Double) -> Double {
        if let histogram {
            return histogram.totalCount == 0 ? 0 : Double(histogram.valueAtPercentile(p)) / 1000
        }
        guard !listed.isEmpty else { return 0 }
        let sorted = listed.sorted()
        let wanted = Int((min(max(p, 0), 100) / 100 * Double(sorted.count) + 0.5).rounded(.down))
        return Double(sorted[min(max(wanted, 1), sorted.count) - 1]) / 1000
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
    /// Ctrl-C: once requested, no request is started; what ran is reported.
    var interruption: Interruption? = nil
    /// The privacy signals every request carries (`--gdpr`, `--tcf`, …).
    var privacy = PrivacySignals()
    /// The whole run's progress (the overall ETA), when set.
    var runProgress: RunProgress? = nil

    private var interrupted: Bool { interruption?.isRequested ?? false }

    /// The phases `run(placements:)` will measure: per placement, the waterfall and each line whose network exists.
    func phaseCount(placements: [String]) -> Int {
        placements.reduce(0) { count, id in
            guard let placement = configuration.mediation.placements[id] else { return count }
            return count + 1 + placement.lines.filter { networks[$0.network] != nil }.count
        }
    }

    func run(placements: [String]) async -> [PlacementReport] {
        var reports: [PlacementReport] = []
        let phases = phaseCount(placements: placements)
        var phase = 0
        for id in placements {
            guard let placement = configuration.mediation.placements[id], !interrupted else {
                continue
            }
            let format = placement.format
            let mediatedRequest = AdRequest(placement: id, format: format, privacy: privacy, testMode: true)
            phase += 1
            let mediated = await measure(label: "\(id) (waterfall)", phase: (phase, phases)) { () async -> Sample in
                let outcome = await mediator.loadWithTrace(mediatedRequest)
                var sample = Sample(outcome)
                if sample.winner != nil { sample.winner = Self.baseLine(wonIn: outcome.trace, of: placement) }
                return sample
            }
            var lines: [(String, String, Tally)] = []
            guard mediated.requests > 0 else { continue }
            for line in placement.lines {
                guard let network = networks[line.network], !interrupted else { continue }
                let request = AdRequest(
                    placement: line.placement, format: format, privacy: privacy, testMode: true, timeout: line.timeout)
                phase += 1
                let label = "\(id) → \(line.network)/\(line.placement)"
                let tally = await measure(label: label, phase: (phase, phases)) { () async -> Sample in
                    do {
                        let result = try await network.load(request)
                        result.ad?.invalidate()
                        return Sample(result.ad, linePrice: line.ecpm)
                    } catch let error as AdError {
                        return Sample(error: error)
                    } catch {
                        return Sample(error: AdError(.network, "\(error)"))
                    }
                }
                if tally.requests > 0 { lines.append((line.network, line.placement, tally)) }
            }
            reports.append(PlacementReport(id: id, mediated: mediated, lines: lines))
        }
        return reports
    }

    /// The line of `placement`'s own waterfall (its index in `lines`, the rows of the report) that won the request
    /// `trace` records. The trace's index counts the lines the request ran: the placement's own, or an A/B arm's
    /// when the arm has lines of its own, whose index 0 may be another network. That line is the first of the
    /// placement's own with its network and ad unit; nil when there is none (its win is counted on no row).
    static func baseLine(wonIn trace: MediationTrace, of placement: PlacementConfiguration) -> Int? {
        guard let index = trace.winnerIndex else { return nil }
        guard let label = trace.abLabel, placement.arms.first(where: { $0.label == label })?.lines != nil else {
            return index
        }
        guard trace.lines.indices.contains(index) else { return nil }
        let winner = trace.lines[index]
        return placement.lines.firstIndex { $0.network == winner.network && $0.placement == winner.placement }
    }

    /// Runs `requests` calls of `call` with `concurrency` workers, recording latency, fill, errors and winners.
    /// Stops starting requests once ``interruption`` is requested.
    private func measure(
        label: String, phase: (index: Int, count: Int), _ call: @escaping @Sendable () async -> Sample
    ) async -> Tally {
        let total = requests
        let workers = max(1, min(concurrency, total))
        let counter = ProgressCounter(total: total, label: label, phase: phase, progress: progress, run: runProgress)
        let runStart = ContinuousClock.now
        let interruption = self.interruption
        return await withTaskGroup(of: Tally.self) { group in
            for worker in 0..<workers {
                group.addTask {
                    var tally = Tally()
                    var i = worker
                    while i < total, !(interruption?.isRequested ?? false) {
                        let start = ContinuousClock.now
                        let sample = await call()
                        let end = ContinuousClock.now
                        tally.record(latency: end - start, second: Int((end - runStart).components.seconds), sample)
                        counter.tick()
                        i += workers
                    }
                    return tally
                }
            }
            var merged = Tally()
            for await part in group { merged.merge(part) }
            counter.finish(interrupted: merged.requests < total)
            return merged
        }
    }
}

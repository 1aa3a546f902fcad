import Foundation

/// `mediate compare`'s report as one typed value: `--format json` prints it, the HTML embeds it, the table and the
/// CSV are rendered from it. Its figures are exact; the JSON rounds rates and milliseconds to 3 decimals and dollars
/// to 6, under the key names of docs/CONFIG.md.
struct CompareReport: Encodable, Sendable {
    /// One placement: its waterfall's figures, then each line's network asked alone.
    var placements: [Placement]
    /// A run stopped early: `"partial": {"requests_done", "requests_planned"}`; absent otherwise.
    var partial: PartialRun?

    /// The report of `reports`; `given`: the privacy options, named in each blocked source's `privacy_blocked`.
    init(_ reports: [PlacementReport], partial: PartialRun? = nil, given: [String] = []) {
        placements = reports.map { Placement($0, given: given) }
        self.partial = partial
    }

    enum CodingKeys: String, CodingKey {
        case placements, partial
    }

    /// A placement's waterfall, its A/B labels and its lines.
    struct Placement: Encodable, Sendable {
        var id: String
        var requests: Int
        var fills: Int
        var fillRate: Double
        var latency: LatencyFigures
        /// Errors by code.
        var errors: [String: Int]
        var revenue: RevenueFigures
        /// Requests and fills per second of the run (seconds without requests left out).
        var timeline: [Second]
        /// By A/B label.
        var abLabels: [String: Label]
        var lines: [Line]
        /// Requests the privacy rules blocked, with their reasons; absent when none were.
        var privacyBlocked: PrivacyBlocked?

        init(_ report: PlacementReport, given: [String]) {
            let m = report.mediated
            id = report.id
            requests = m.requests
            fills = m.fills
            fillRate = m.fillRate
            latency = LatencyFigures(m)
            errors = m.errors
            revenue = RevenueFigures(m)
            timeline = m.timeline.keys.sorted().map { second in
                let bucket = m.timeline[second] ?? (0, 0)
                return Second(second: second, requests: bucket.requests, fills: bucket.fills)
            }
            abLabels = m.labels.mapValues { Label(requests: $0.requests, fills: $0.fills, revenue: $0.revenue) }
            lines = report.lines.enumerated().map { index, line in
                Line(
                    network: line.network, placement: line.placement, requests: line.tally.requests,
                    fills: line.tally.fills, fillRate: line.tally.fillRate, wins: m.wins["\(index)"] ?? 0,
                    wonRevenueUSD: m.winRevenue["\(index)"] ?? 0, errors: line.tally.errors,
                    latency: LatencyFigures(line.tally), revenue: RevenueFigures(line.tally),
                    privacyBlocked: PrivacyBlocked(line.tally, given: given))
            }
            privacyBlocked = PrivacyBlocked(m, given: given)
        }

        enum CodingKeys: String, CodingKey {
            case id, requests, fills, errors, revenue, timeline, lines
            case fillRate = "fill_rate"
            case latency = "latency_ms"
            case abLabels = "ab_labels"
            case privacyBlocked = "privacy_blocked"
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(id, forKey: .id)
            try container.encode(requests, forKey: .requests)
            try container.encode(fills, forKey: .fills)
            try container.encode(round3(fillRate), forKey: .fillRate)
            try container.encode(latency, forKey: .latency)
            try container.encode(errors, forKey: .errors)
            try container.encode(revenue, forKey: .revenue)
            try container.encode(timeline, forKey: .timeline)
            try container.encode(abLabels, forKey: .abLabels)
            try container.encode(lines, forKey: .lines)
            try container.encodeIfPresent(privacyBlocked, forKey: .privacyBlocked)
        }
    }

    /// One second of the run.
    struct Second: Encodable, Sendable {
        var second: Int
        var requests: Int
        var fills: Int

        enum CodingKeys: String, CodingKey {
            case second, requests, fills
        }
    }

    /// The requests of one A/B label.
    struct Label: Encodable, Sendable {
        var requests: Int
        var fills: Int
        /// Estimated revenue of its fills (US dollars).
        var revenue: Double

        var fillRate: Double { requests == 0 ? 0 : Double(fills) / Double(requests) }
        var revenuePerMille: Double { requests == 0 ? 0 : revenue / Double(requests) * 1000 }

        enum CodingKeys: String, CodingKey {
            case requests, fills
            case fillRate = "fill_rate"
            case revenuePerMille = "revenue_per_1000_requests_usd"
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(requests, forKey: .requests)
            try container.encode(fills, forKey: .fills)
            try container.encode(round3(fillRate), forKey: .fillRate)
            try container.encode(Reports.round6(revenuePerMille), forKey: .revenuePerMille)
        }
    }

    /// A line's network asked alone, and what the line won in the waterfall.
    struct Line: Encodable, Sendable {
        var network: String
        var placement: String
        var requests: Int
        var fills: Int
        var fillRate: Double
        /// The waterfall's requests this line won (another run than its fills).
        var wins: Int
        var wonRevenueUSD: Double
        var errors: [String: Int]
        var latency: LatencyFigures
        var revenue: RevenueFigures
        var privacyBlocked: PrivacyBlocked?

        /// `network/placement`.
        var name: String { "\(network)/\(placement)" }

        enum CodingKeys: String, CodingKey {
            case network, placement, requests, fills, wins, errors, revenue
            case fillRate = "fill_rate"
            case wonRevenueUSD = "won_revenue_usd"
            case latency = "latency_ms"
            case privacyBlocked = "privacy_blocked"
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(network, forKey: .network)
            try container.encode(placement, forKey: .placement)
            try container.encode(requests, forKey: .requests)
            try container.encode(fills, forKey: .fills)
            try container.encode(round3(fillRate), forKey: .fillRate)
            try container.encode(wins, forKey: .wins)
            try container.encode(Reports.round6(wonRevenueUSD), forKey: .wonRevenueUSD)
            try container.encode(errors, forKey: .errors)
            try container.encode(latency, forKey: .latency)
            try container.encode(revenue, forKey: .revenue)
            try container.encodeIfPresent(privacyBlocked, forKey: .privacyBlocked)
        }
    }
}

/// A source's estimated revenue: in all, per 1000 requests (with its 95 % interval, which a later run's `--baseline`
/// reads for its change's interval), and its fills by precision.
struct RevenueFigures: Encodable, Sendable {
    var totalUSD: Double
    var perMilleUSD: Double
    /// Fills by revenue precision (`estimated`, `publisher_defined`, …).
    var fillsByPrecision: [String: Int]
    /// The 95 % interval of ``perMilleUSD``, when the tally has enough requests.
    var perMilleInterval: Statistics.Interval?

    init(_ tally: Tally) {
        totalUSD = tally.revenue
        perMilleUSD = tally.revenuePerMille
        fillsByPrecision = tally.precisions
        perMilleInterval = Statistics.meanInterval(
            count: tally.requests, sum: tally.revenue, squares: tally.revenueSquares, scale: 1000)
    }

    enum CodingKeys: String, CodingKey {
        case totalUSD = "total_usd"
        case perMilleUSD = "per_1000_requests_usd"
        case fillsByPrecision = "fills_by_precision"
        case perMilleInterval = "per_1000_requests_usd_ci95"
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(Reports.round6(totalUSD), forKey: .totalUSD)
        try container.encode(Reports.round6(perMilleUSD), forKey: .perMilleUSD)
        try container.encode(fillsByPrecision, forKey: .fillsByPrecision)
        try container.encodeIfPresent(
            perMilleInterval.map { [Reports.round6($0.low), Reports.round6($0.high)] }, forKey: .perMilleInterval)
    }
}

import Foundation

/// `mediate compare --arms --format json`: per placement, each arm's figures with their 95 % intervals and, after the
/// first arm, its differences from the first. Figures are exact; the JSON rounds them (3 decimals, intervals 4).
struct ArmsReport: Encodable, Sendable {
    /// One placement's arms.
    var arms: [Placement]

    init(_ results: [(placement: String, arms: [(arm: Arm, tally: Tally)])]) {
        arms = results.map { result in
            let first = result.arms.first?.tally
            let base = first?.revenuePerMille ?? 0
            return Placement(
                placement: result.placement,
                arms: result.arms.enumerated().map { index, arm in
                    Figures(arm.arm, arm.tally, first: index == 0 ? nil : first, base: base)
                })
        }
    }

    enum CodingKeys: String, CodingKey {
        case arms
    }

    /// A placement and its arms, in the order given.
    struct Placement: Encodable, Sendable {
        var placement: String
        var arms: [Figures]

        enum CodingKeys: String, CodingKey {
            case placement, arms
        }
    }

    /// An interval rounded to 4 decimals as `[low, high]`, or `null`.
    struct Bounds: Encodable, Sendable {
        var interval: Statistics.Interval?

        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            guard let interval else { return try container.encodeNil() }
            try container.encode([(interval.low * 1e4).rounded() / 1e4, (interval.high * 1e4).rounded() / 1e4])
        }
    }

    /// One arm's figures.
    struct Figures: Encodable, Sendable {
        var arm: Arm
        var requests: Int
        var fills: Int
        var fillRate: Double
        var revenuePerMille: Double
        /// Its revenue per 1000 requests over the first arm's; nil when the first earned nothing.
        var revenueVsFirst: Double?
        var confidence: ArmsRunner.Confidence
        var latency: LatencyFigures
        var errors: [String: Int]
        /// Against the first arm (every arm after it).
        var vsFirst: VsFirst?

        init(_ arm: Arm, _ tally: Tally, first: Tally?, base: Double) {
            self.arm = arm
            requests = tally.requests
            fills = tally.fills
            fillRate = tally.fillRate
            revenuePerMille = tally.revenuePerMille
            revenueVsFirst = base > 0 ? tally.revenuePerMille / base : nil
            confidence = ArmsRunner.Confidence(tally, first: first)
            latency = LatencyFigures(tally)
            errors = tally.errors
            vsFirst = first.map { first in
                VsFirst(
                    fillRateDifference: tally.fillRate - first.fillRate,
                    revenuePerMilleDifference: tally.revenuePerMille - first.revenuePerMille,
                    fillInterval: confidence.fillDifference, revenueInterval: confidence.revenueDifference)
            }
        }

        enum CodingKeys: String, CodingKey {
            case arm, requests, fills, errors
            case fillRate = "fill_rate"
            case fillRateCI = "fill_rate_ci95"
            case revenuePerMille = "revenue_per_mille"
            case revenuePerMilleCI = "revenue_per_mille_ci95"
            case revenueVsFirst = "revenue_vs_first"
            case latency = "latency_ms"
            case vsFirst = "vs_first"
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(arm.rawValue, forKey: .arm)
            try container.encode(requests, forKey: .requests)
            try container.encode(fills, forKey: .fills)
            try container.encode(round3(fillRate), forKey: .fillRate)
            try container.encode(Bounds(interval: confidence.fill), forKey: .fillRateCI)
            try container.encode(round3(revenuePerMille), forKey: .revenuePerMille)
            try container.encode(Bounds(interval: confidence.revenue), forKey: .revenuePerMilleCI)
            try container.encode(revenueVsFirst.map(round3), forKey: .revenueVsFirst)
            try container.encode(latency, forKey: .latency)
            try container.encode(errors, forKey: .errors)
            try container.encodeIfPresent(vsFirst, forKey: .vsFirst)
        }
    }

    /// An arm against the first: each difference, its interval, and whether it is significant (the interval
    /// excludes 0).
    struct VsFirst: Encodable, Sendable {
        var fillRateDifference: Double
        var revenuePerMilleDifference: Double
        var fillInterval: Statistics.Interval?
        var revenueInterval: Statistics.Interval?

        enum CodingKeys: String, CodingKey {
            case fillRateDifference = "fill_rate_difference"
            case fillRateDifferenceCI = "fill_rate_difference_ci95"
            case fillRateSignificant = "fill_rate_significant"
            case revenuePerMilleDifference = "revenue_per_mille_difference"
            case revenuePerMilleDifferenceCI = "revenue_per_mille_difference_ci95"
            case revenuePerMilleSignificant = "revenue_per_mille_significant"
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(round3(fillRateDifference), forKey: .fillRateDifference)
            try container.encode(Bounds(interval: fillInterval), forKey: .fillRateDifferenceCI)
            try container.encode(fillInterval.map { !$0.containsZero } ?? false, forKey: .fillRateSignificant)
            try container.encode(round3(revenuePerMilleDifference), forKey: .revenuePerMilleDifference)
            try container.encode(Bounds(interval: revenueInterval), forKey: .revenuePerMilleDifferenceCI)
            try container.encode(
                revenueInterval.map { !$0.containsZero } ?? false, forKey: .revenuePerMilleSignificant)
        }
    }
}

import Foundation

/// The 95 % confidence intervals `compare --arms` reports, so noise can be told from a difference.
enum Statistics {
    /// The normal quantile of a two-sided 95 % interval.
    static let z95 = 1.959_963_984_540_054

    /// A closed interval.
    struct Interval: Sendable, Equatable {
        var low: Double
        var high: Double

        /// Whether the interval holds 0: a difference whose interval holds 0 is not significant.
        var containsZero: Bool { low <= 0 && high >= 0 }
    }

    /// The Wilson score interval of a proportion: `successes` of `trials` (a fill rate). Unlike the plain normal
    /// interval it stays inside 0…1 and is not empty at 0 % or 100 %. Nil without trials.
    static func wilson(successes: Int, trials: Int, z: Double = z95) -> Interval? {
        guard trials > 0, successes >= 0, successes <= trials else { return nil }
        let n = Double(trials)
        let p = Double(successes) / n
        let z2 = z * z
        let centre = (p + z2 / (2 * n)) / (1 + z2 / n)
        let half = z / (1 + z2 / n) * (p * (1 - p) / n + z2 / (4 * n * n)).squareRoot()
        return Interval(low: max(0, centre - half), high: min(1, centre + half))
    }

    /// The mean of per-request values and its sample variance, from their count, sum and sum of squares.
    static func meanAndVariance(count: Int, sum: Double, squares: Double) -> (mean: Double, variance: Double)? {
        guard count > 0 else { return nil }
        let n = Double(count)
        let mean = sum / n
        guard count > 1 else { return (mean, 0) }
        // Rounding can leave a tiny negative where every value is the same.
        return (mean, max(0, (squares - n * mean * mean) / (n - 1)))
    }

    /// The normal-approximation interval of a mean (revenue per request, scaled by `scale`: 1000 for revenue per
    /// 1000 requests). Nil without values.
    static func meanInterval(count: Int, sum: Double, squares: Double, scale: Double = 1, z: Double = z95)
        -> Interval?
    {
        guard let (mean, variance) = meanAndVariance(count: count, sum: sum, squares: squares) else { return nil }
        let half = z * (variance / Double(count)).squareRoot()
        return Interval(low: (mean - half) * scale, high: (mean + half) * scale)
    }

    /// The interval of the difference of two fill rates (b − a), normal approximation with unpooled variances.
    static func proportionDifference(
        _ a: (successes: Int, trials: Int), _ b: (successes: Int, trials: Int), z: Double = z95
    )
        -> Interval?
    {
        guard a.trials > 0, b.trials > 0 else { return nil }
        let pa = Double(a.successes) / Double(a.trials)
        let pb = Double(b.successes) / Double(b.trials)
        let half = z * (pa * (1 - pa) / Double(a.trials) + pb * (1 - pb) / Double(b.trials)).squareRoot()
        return Interval(low: pb - pa - half, high: pb - pa + half)
    }

    /// The interval of the difference of two means (b − a), each from its count, sum and sum of squares, scaled.
    static func meanDifference(
        _ a: (count: Int, sum: Double, squares: Double), _ b: (count: Int, sum: Double, squares: Double),
        scale: Double = 1, z: Double = z95
    ) -> Interval? {
        guard let ma = meanAndVariance(count: a.count, sum: a.sum, squares: a.squares),
            let mb = meanAndVariance(count: b.count, sum: b.sum, squares: b.squares)
        else { return nil }
        let half = z * (ma.variance / Double(a.count) + mb.variance / Double(b.count)).squareRoot()
        return Interval(low: (mb.mean - ma.mean - half) * scale, high: (mb.mean - ma.mean + half) * scale)
    }
}

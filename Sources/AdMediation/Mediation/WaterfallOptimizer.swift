import Foundation

/// What the optimizer has learned about one waterfall line. Every count is exponentially decayed (see
/// ``OptimizerConfiguration/halfLifeRequests``), so recent requests weigh more than old ones.
public struct LineStatistics: Codable, Sendable, Hashable {
    /// Requests the line answered (fill, no fill, error, timeout, fill under its floor).
    public var attempts: Double = 0
    /// Fills, including fills outranked by a higher line.
    public var fills: Double = 0
    /// Timeouts.
    public var timeouts: Double = 0
    /// The sum of the fills' eCPMs.
    public var ecpmSum: Double = 0
    /// The sum of the squares of the fills' eCPMs.
    public var ecpmSquares: Double = 0

    /// Creates empty statistics.
    public init() {}
}

/// Orders a placement's waterfall lines from what it observed: a Thompson-sampling bandit.
///
/// **Why order by price.** With independent lines and the first fill winning, putting line *i* before line *j*
/// earns θᵢθⱼ(pᵢ − pⱼ) more than the reverse (θ the fill rate, p the eCPM of a fill), so expected revenue is highest
/// with lines in decreasing eCPM whatever their fill rates. Fill rate matters through time: a line that rarely fills,
/// or times out, spends the request's deadline. So each line's key is its eCPM, discounted by its timeout share and by
/// a fill rate under 5 %: `key = μ · (1 − timeouts/attempts) · min(1, θ / 0.05)`.
///
/// **Why Thompson sampling.** A line's eCPM and fill are only known from the requests it answered, and a line never
/// tried first is rarely observed. On an exploring request (a share ``OptimizerConfiguration/exploration`` of
/// traffic, the cap) μ and θ are drawn from their posteriors — a normal around the observed mean eCPM (prior: the
/// line's `ecpm`, else its `floor_ecpm`, else 1, with the weight of one fill) and Beta(1 + fills, 1 + misses) — so
/// uncertain lines get tried in proportion to their chance of being best; the other requests use the posterior
/// means. Unlike ε-greedy, exploration concentrates on plausible orders; unlike UCB it needs no tuning constant and
/// copes with the delayed, batched feedback of parallel lines.
///
/// Pinned lines keep their configured position; floors are untouched (a fill under a line's floor is still no
/// fill). Deterministic for a given seed and sequence of observations.
struct WaterfallOptimizer: Sendable {
    private(set) var statistics: [String: LineStatistics]
    private var rng: SplitMix64
    private let decay: Double
    private let configuration: OptimizerConfiguration

    init(configuration: OptimizerConfiguration, seed: UInt64) {
        self.configuration = configuration
        self.statistics = [:]
        self.rng = SplitMix64(seed: configuration.seed ?? seed)
        self.decay = Foundation.pow(0.5, 1 / max(1, configuration.halfLifeRequests))
    }

    static func key(_ line: WaterfallLine) -> String { "\(line.network)/\(line.placement)" }

    /// The order to try `lines` in: configured indexes, pinned lines in place.
    mutating func order(_ lines: [WaterfallLine]) -> [Int] {
        let explore = rng.nextUnit() < configuration.exploration
        let pinned = Set(configuration.pinned)
        var keyed: [(index: Int, key: Double)] = []
        for index in lines.indices where !pinned.contains(index) {
            keyed.append((index, score(lines[index], sample: explore)))
        }
        keyed.sort { $0.key != $1.key ? $0.key > $1.key : $0.index < $1.index }
        var free = keyed.map(\.index)[...]
        return lines.indices.map { pinned.contains($0) ? $0 : free.popFirst() ?? $0 }
    }

    private mutating func score(_ line: WaterfallLine, sample: Bool) -> Double {
        let stats = statistics[Self.key(line)] ?? LineStatistics()
        let prior = line.ecpm ?? line.floorEcpm ?? 1
        let weight = 1 + stats.fills
        let mean = (prior + stats.ecpmSum) / weight
        let variance = max(0, (prior * prior + stats.ecpmSquares) / weight - mean * mean)
        let spread = max(variance.squareRoot(), 0.25 * max(mean, 0.01))
        var ecpm = mean
        var fill = (1 + stats.fills) / (2 + stats.attempts)
        if sample {
            ecpm = max(0, mean + spread / weight.squareRoot() * rng.nextGaussian())
            fill = rng.nextBeta(1 + stats.fills, 1 + max(0, stats.attempts - stats.fills))
        }
        let timeoutShare = stats.attempts > 0 ? min(1, stats.timeouts / stats.attempts) : 0
        return ecpm * (1 - timeoutShare) * min(1, fill / 0.05)
    }

    /// Learns from one request's trace (lines in configured order). Every line's statistics decay by one request.
    mutating func observe(_ trace: MediationTrace, lines: [WaterfallLine]) {
        for key in statistics.keys {
            statistics[key]?.attempts *= decay
            statistics[key]?.fills *= decay
            statistics[key]?.timeouts *= decay
            statistics[key]?.ecpmSum *= decay
            statistics[key]?.ecpmSquares *= decay
        }
        for (index, traced) in trace.lines.enumerated() where lines.indices.contains(index) {
            let line = lines[index]
            var stats = statistics[Self.key(line)] ?? LineStatistics()
            switch traced.outcome {
            case .fill, .skipped(.outranked):
                let price = traced.ecpm ?? line.ecpm ?? line.floorEcpm ?? 0
                stats.attempts += 1
                stats.fills += 1
                stats.ecpmSum += price
                stats.ecpmSquares += price * price
            case .noFill, .error, .skipped(.belowFloor), .skipped(.expired):
                stats.attempts += 1
            case .timeout:
                stats.attempts += 1
                stats.timeouts += 1
            case .skipped:
                continue
            }
            statistics[Self.key(line)] = stats
        }
    }

    /// Replaces what was learned (restored from a store); unknown lines are kept, so a changed waterfall keeps what
    /// still applies.
    mutating func restore(_ saved: [String: LineStatistics]) {
        for (key, stats) in saved where stats.isUsable { statistics[key] = stats }
    }
}

extension LineStatistics {
    /// Finite, non-negative and consistent (a restored file is outside input).
    var isUsable: Bool {
        let values = [attempts, fills, timeouts, ecpmSum, ecpmSquares]
        return values.allSatisfy { $0.isFinite && $0 >= 0 && $0 <= 1e12 } && fills <= attempts + 1e-9
            && timeouts <= attempts + 1e-9
    }
}

/// SplitMix64 — small, fast, seedable — with the samplers the optimizer needs. Public so that a tool (the demand
/// sandbox) or a simulation draws the same values from the same seed as the optimizer does.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64
    /// A generator whose draws are fixed by `seed`.
    public init(seed: UInt64) { state = seed }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    public mutating func nextUnit() -> Double { Double(next() >> 11) / Double(UInt64(1) << 53) }

    /// Standard normal (Box–Muller).
    mutating func nextGaussian() -> Double {
        let u1 = max(nextUnit(), 1e-300), u2 = nextUnit()
        return (-2 * Foundation.log(u1)).squareRoot() * Foundation.cos(2 * Double.pi * u2)
    }

    /// Gamma(shape, 1) by Marsaglia and Tsang (shape < 1 boosted by U^(1/shape)).
    mutating func nextGamma(_ shape: Double) -> Double {
        if shape < 1 {
            return nextGamma(shape + 1) * Foundation.pow(max(nextUnit(), 1e-300), 1 / shape)
        }
        let d = shape - 1.0 / 3, c = 1 / (9 * d).squareRoot()
        while true {
            var x: Double, v: Double
            repeat {
                x = nextGaussian()
                v = 1 + c * x
            } while v <= 0
            v = v * v * v
            let u = nextUnit()
            if u < 1 - 0.0331 * x * x * x * x
                || Foundation.log(max(u, 1e-300)) < 0.5 * x * x + d * (1 - v + Foundation.log(v))
            {
                return d * v
            }
        }
    }

    /// Beta(a, b) from two gammas.
    mutating func nextBeta(_ a: Double, _ b: Double) -> Double {
        let x = nextGamma(a), y = nextGamma(b)
        return x + y > 0 ? x / (x + y) : 0.5
    }
}

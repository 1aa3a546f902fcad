import AdMediation
import AdTransport
import AdapterKit
import Foundation
import Synchronization

/// How a network (or one placement) behaves: fill rate, prices, latency and injected faults. `Codable`; every
/// field has a default (always fill, eCPM uniform 0.5–5, no latency, no faults).
public struct NetworkScenario: Codable, Sendable, Hashable {
    /// Probability that a valid ad request fills (0…1).
    public var fillRate: Double
    /// The price of a fill.
    public var ecpm: Distribution
    /// Extra latency before answering, in milliseconds.
    public var latencyMs: Distribution
    /// Faults injected into ad requests, each with its own rate; at most one applies per request.
    public var faults: [Fault]
    /// Drift: from the `after_requests`-th ad request of the network on (counted over all its placements, so that a
    /// placement's drift happens at the same moment whoever asks it), a phase's fill rate and prices replace these.
    /// Phases apply in order; the last one reached wins. Default: none.
    public var drift: [DriftPhase]
    /// Faults injected into a route module's requests that are not ad requests, where the module draws one
    /// (`SandboxReply.withRequestFault`: GrowthCat's reward validations, `POST /v1/ads/reward/validate`),
    /// each with its own rate; at most one applies per attempt. Default: none.
    public var validationFaults: [ValidationFault]
    /// The most faults one validation gets (its attempts share its `sdk_event_id`, or its token without one), so a
    /// client that retries enough always gets an answer. Default 2.
    public var maxValidationFaults: Int

    /// Creates a scenario (without validation faults: set ``validationFaults`` and ``maxValidationFaults``).
    public init(
        fillRate: Double = 1, ecpm: Distribution = .uniform(min: 0.5, max: 5), latencyMs: Distribution = .fixed(0),
        faults: [Fault] = [],
        drift: [DriftPhase] = []
    ) {
        self.fillRate = fillRate
        self.ecpm = ecpm
        self.latencyMs = latencyMs
        self.faults = faults
        self.drift = drift
        self.validationFaults = []
        self.maxValidationFaults = 2
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case fillRate = "fill_rate", ecpm, latencyMs = "latency_ms", faults, drift
        case validationFaults = "validation_faults", maxValidationFaults = "max_validation_faults"
    }

    /// The fill rate and prices in force for the `count`-th request (counted from 0).
    func phase(at count: Int) -> (fillRate: Double, ecpm: Distribution) {
        var current = (fillRate, ecpm)
        for phase in drift where count >= phase.afterRequests {
            current = (phase.fillRate ?? current.0, phase.ecpm ?? current.1)
        }
        return current
    }

    /// Decodes with defaults.
    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        fillRate = try c.decodeIfPresent(Double.self, forKey: .fillRate) ?? 1
        ecpm = try c.decodeIfPresent(Distribution.self, forKey: .ecpm) ?? .uniform(min: 0.5, max: 5)
        latencyMs = try c.decodeIfPresent(Distribution.self, forKey: .latencyMs) ?? .fixed(0)
        faults = try c.decodeIfPresent([Fault].self, forKey: .faults) ?? []
        drift = try c.decodeIfPresent([DriftPhase].self, forKey: .drift) ?? []
        validationFaults = try c.decodeIfPresent([ValidationFault].self, forKey: .validationFaults) ?? []
        let most = try c.decodeIfPresent(Double.self, forKey: .maxValidationFaults) ?? 2
        guard let whole = OutsideValue.integer(most, in: 0...10) else {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: c.codingPath + [CodingKeys.maxValidationFaults],
                    debugDescription: "must be a whole number 0…10, got \(most)"))
        }
        maxValidationFaults = whole
        guard (0...1).contains(fillRate) else {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: c.codingPath + [CodingKeys.fillRate], debugDescription: "must be 0…1, got \(fillRate)"))
        }
        try ecpm.check(range: 0...1_000_000, path: c.codingPath + [CodingKeys.ecpm])
        try latencyMs.check(range: 0...Distribution.maxLatencyMs, path: c.codingPath + [CodingKeys.latencyMs])
    }
}

/// A change of a network's behaviour during a run (see ``NetworkScenario/drift``).
public struct DriftPhase: Codable, Sendable, Hashable {
    /// The phase starts with this ad request of the network (counted from 0 over all its placements).
    public var afterRequests: Int
    /// The fill rate from then on (0…1); default: unchanged.
    public var fillRate: Double?
    /// The prices from then on; default: unchanged.
    public var ecpm: Distribution?

    /// Creates a phase.
    public init(afterRequests: Int, fillRate: Double? = nil, ecpm: Distribution? = nil) {
        self.afterRequests = afterRequests
        self.fillRate = fillRate
        self.ecpm = ecpm
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case afterRequests = "after_requests", fillRate = "fill_rate", ecpm
    }

    /// Decodes and checks a phase.
    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let after = try c.decode(Double.self, forKey: .afterRequests)
        guard let whole = OutsideValue.integer(after, in: 0...1_000_000_000) else {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: c.codingPath + [CodingKeys.afterRequests],
                    debugDescription: "must be a whole number 0…1000000000, got \(after)"))
        }
        afterRequests = whole
        fillRate = try c.decodeIfPresent(Double.self, forKey: .fillRate)
        ecpm = try c.decodeIfPresent(Distribution.self, forKey: .ecpm)
        if let fillRate, !(0...1).contains(fillRate) {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: c.codingPath + [CodingKeys.fillRate], debugDescription: "must be 0…1, got \(fillRate)"))
        }
        try ecpm?.check(range: 0...1_000_000, path: c.codingPath + [CodingKeys.ecpm])
    }
}

/// A distribution of non-negative numbers. JSON: `{"fixed": 5}`, `{"uniform": {"min": 1, "max": 3}}`,
/// `{"log_normal": {"median": 80, "sigma": 0.5}}`.
public enum Distribution: Codable, Sendable, Hashable {
    /// Always `value`.
    case fixed(Double)
    /// Uniform between `min` and `max`.
    case uniform(min: Double, max: Double)
    /// Log-normal with the given median and sigma (of the underlying normal).
    case logNormal(median: Double, sigma: Double)

    enum CodingKeys: String, CodingKey, CaseIterable { case fixed, uniform, logNormal = "log_normal" }
    struct Range: Codable {
        var min: Double
        var max: Double

        enum CodingKeys: String, CodingKey, CaseIterable { case min, max }
    }
    struct LogNormal: Codable {
        var median: Double
        var sigma: Double

        enum CodingKeys: String, CodingKey, CaseIterable { case median, sigma }
    }

    /// Decodes one of the three shapes.
    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        if let value = try c.decodeIfPresent(Double.self, forKey: .fixed) {
            self = .fixed(value)
        } else if let range = try c.decodeIfPresent(Range.self, forKey: .uniform) {
            self = .uniform(min: range.min, max: range.max)
        } else if let ln = try c.decodeIfPresent(LogNormal.self, forKey: .logNormal) {
            self = .logNormal(median: ln.median, sigma: ln.sigma)
        } else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath, debugDescription: "expected fixed, uniform or log_normal"))
        }
    }

    /// Encodes one of the three shapes.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .fixed(let v): try c.encode(v, forKey: .fixed)
        case .uniform(let min, let max): try c.encode(Range(min: min, max: max), forKey: .uniform)
        case .logNormal(let median, let sigma):
            try c.encode(LogNormal(median: median, sigma: sigma), forKey: .logNormal)
        }
    }

    /// The longest latency a scenario may ask for, in milliseconds (one minute); samples are clamped to it.
    static let maxLatencyMs: Double = 60_000

    /// Checks that every parameter is a finite number in `range` (sigma: 0…10).
    func check(range: ClosedRange<Double>, path: [any CodingKey]) throws {
        let values: [Double]
        switch self {
        case .fixed(let v): values = [v]
        case .uniform(let lo, let hi): values = [lo, hi]
        case .logNormal(let median, let sigma):
            values = [median]
            guard (0...10).contains(sigma) else {
                throw DecodingError.dataCorrupted(
                    .init(codingPath: path, debugDescription: "sigma must be 0…10, got \(sigma)"))
            }
        }
        for value in values where !range.contains(value) {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: path,
                    debugDescription: "every value must be \(range.lowerBound)…\(range.upperBound), got \(value)"))
        }
    }

    /// A sample clamped to `0 ... maximum` (non-finite samples are 0), so programmatic scenarios are safe too.
    func sample(_ rng: inout SeededGenerator, maximum: Double) -> Double {
        let value = sample(&rng)
        return value.isFinite ? min(max(0, value), maximum) : 0
    }

    func sample(_ rng: inout SeededGenerator) -> Double {
        switch self {
        case .fixed(let v):
            return max(0, v)
        case .uniform(let lo, let hi):
            return max(0, lo + (hi - lo) * rng.nextUnit())
        case .logNormal(let median, let sigma):
            // Box–Muller.
            let u1 = max(rng.nextUnit(), 1e-12), u2 = rng.nextUnit()
            let z = (-2 * Foundation.log(u1)).squareRoot() * cos(2 * .pi * u2)
            return max(0, median * exp(sigma * z))
        }
    }
}

/// The whole sandbox's behaviour: a seed, a scenario per network, and overrides per placement.
public struct SandboxScenario: Codable, Sendable, Hashable {
    /// The random seed; the same seed and the same request order give the same answers.
    public var seed: UInt64
    /// Per network (`growthcat`, `mars`, `chartboost`, `appopen`).
    public var networks: [String: NetworkScenario]
    /// Per placement, keyed `network/placement` (e.g. `mars/mock_tile_1`); wins over the network's scenario.
    public var placements: [String: NetworkScenario]

    /// Creates a scenario; the default always fills with no faults.
    public init(
        seed: UInt64 = 42, networks: [String: NetworkScenario] = [:], placements: [String: NetworkScenario] = [:]
    ) {
        self.seed = seed
        self.networks = networks
        self.placements = placements
    }

    enum CodingKeys: String, CodingKey, CaseIterable { case seed, networks, placements }

    /// Decodes with defaults.
    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        seed = try c.decodeIfPresent(UInt64.self, forKey: .seed) ?? 42
        networks = try c.decodeIfPresent([String: NetworkScenario].self, forKey: .networks) ?? [:]
        placements = try c.decodeIfPresent([String: NetworkScenario].self, forKey: .placements) ?? [:]
    }

    /// Decodes a scenario file or admin body: bounded (size, depth, strings, items) and checked (rates 0…1, statuses
    /// 100…599, latencies 0…60 000 ms, prices 0…1 000 000), with errors that name the field.
    public static func decode(json: Data) throws(SandboxError) -> SandboxScenario {
        if let violation = JSONLimits(maxBytes: 1 << 20, maxDepth: 16, maxStringBytes: 4096, maxItems: 1000).violation(
            in: json)
        {
            throw SandboxError("scenario: \(violation)")
        }
        do {
            return try JSONDecoder().decode(SandboxScenario.self, from: json)
        } catch let error as DecodingError {
            throw SandboxError("scenario: \(describe(error))")
        } catch {
            throw SandboxError("scenario: \(error)")
        }
    }

    private static func describe(_ error: DecodingError) -> String {
        func path(_ keys: [any CodingKey]) -> String {
            keys.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined().drop { $0 == "." }.description
        }
        switch error {
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            return "\(path(context.codingPath)): \(context.debugDescription)"
        case .keyNotFound(let key, let context):
            return "\(path(context.codingPath + [key])): required field is missing"
        @unknown default:
            return "\(error)"
        }
    }

    func scenario(network: String, placement: String?) -> NetworkScenario {
        if let placement, let specific = placements["\(network)/\(placement)"] { return specific }
        return networks[network] ?? NetworkScenario()
    }
}

/// The sandbox's seeded generator: the core's SplitMix64, so a seed gives the same draws everywhere.
typealias SeededGenerator = SplitMix64

/// What the dice decided for one ad request.
struct Draw: Sendable {
    var fault: Fault?
    var fills: Bool
    var ecpm: Double
    var latency: Duration
}

extension Distribution.Range {
    /// Decodes `{"min", "max"}`; any other key is an error naming the nearest.
    init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(min: try c.decode(Double.self, forKey: .min), max: try c.decode(Double.self, forKey: .max))
    }
}

extension Distribution.LogNormal {
    /// Decodes `{"median", "sigma"}`; any other key is an error naming the nearest.
    init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(median: try c.decode(Double.self, forKey: .median), sigma: try c.decode(Double.self, forKey: .sigma))
    }
}

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

    /// Creates a scenario.
    public init(fillRate: Double = 1, ecpm: Distribution = .uniform(min: 0.5, max: 5), latencyMs: Distribution = .fixed(0), faults: [Fault] = []) {
        self.fillRate = fillRate
        self.ecpm = ecpm
        self.latencyMs = latencyMs
        self.faults = faults
    }

    enum CodingKeys: String, CodingKey {
        case fillRate = "fill_rate", ecpm, latencyMs = "latency_ms", faults
    }

    /// Decodes with defaults.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        fillRate = try c.decodeIfPresent(Double.self, forKey: .fillRate) ?? 1
        ecpm = try c.decodeIfPresent(Distribution.self, forKey: .ecpm) ?? .uniform(min: 0.5, max: 5)
        latencyMs = try c.decodeIfPresent(Distribution.self, forKey: .latencyMs) ?? .fixed(0)
        faults = try c.decodeIfPresent([Fault].self, forKey: .faults) ?? []
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

    enum CodingKeys: String, CodingKey { case fixed, uniform, logNormal = "log_normal" }
    struct Range: Codable { var min: Double; var max: Double }
    struct LogNormal: Codable { var median: Double; var sigma: Double }

    /// Decodes one of the three shapes.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        if let value = try c.decodeIfPresent(Double.self, forKey: .fixed) {
            self = .fixed(value)
        } else if let range = try c.decodeIfPresent(Range.self, forKey: .uniform) {
            self = .uniform(min: range.min, max: range.max)
        } else if let ln = try c.decodeIfPresent(LogNormal.self, forKey: .logNormal) {
            self = .logNormal(median: ln.median, sigma: ln.sigma)
        } else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "expected fixed, uniform or log_normal"))
        }
    }

    /// Encodes one of the three shapes.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .fixed(let v): try c.encode(v, forKey: .fixed)
        case .uniform(let min, let max): try c.encode(Range(min: min, max: max), forKey: .uniform)
        case .logNormal(let median, let sigma): try c.encode(LogNormal(median: median, sigma: sigma), forKey: .logNormal)
        }
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

/// A fault injected into a response.
public struct Fault: Codable, Sendable, Hashable {
    /// What goes wrong.
    public enum Kind: String, Codable, Sendable, Hashable, CaseIterable {
        /// Answer with `status` (and `Retry-After` for 429) and an error body.
        case status
        /// Send part of the body, then reset the connection.
        case reset
        /// Declare the full length, send half, then close.
        case truncated
        /// 200 with a body that is not JSON.
        case malformedJSON = "malformed_json"
        /// 200 with valid JSON of the wrong shape.
        case wrongShape = "wrong_shape"
        /// 200 with a 9 MiB body (over the client's default 8 MiB cap).
        case oversized
        /// The body arrives in 16-byte chunks, 40 ms apart.
        case slowDrip = "slow_drip"
    }

    /// What goes wrong.
    public var kind: Kind
    /// Probability per request (0…1).
    public var rate: Double
    /// The status for `status` faults. Default 500.
    public var status: Int
    /// `Retry-After` seconds for 429. Default 1.
    public var retryAfterS: Int

    /// Creates a fault.
    public init(_ kind: Kind, rate: Double = 1, status: Int = 500, retryAfterS: Int = 1) {
        self.kind = kind
        self.rate = rate
        self.status = status
        self.retryAfterS = retryAfterS
    }

    enum CodingKeys: String, CodingKey { case kind, rate, status, retryAfterS = "retry_after_s" }

    /// Decodes with defaults.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        kind = try c.decode(Kind.self, forKey: .kind)
        rate = try c.decodeIfPresent(Double.self, forKey: .rate) ?? 1
        status = try c.decodeIfPresent(Int.self, forKey: .status) ?? 500
        retryAfterS = try c.decodeIfPresent(Int.self, forKey: .retryAfterS) ?? 1
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
    public init(seed: UInt64 = 42, networks: [String: NetworkScenario] = [:], placements: [String: NetworkScenario] = [:]) {
        self.seed = seed
        self.networks = networks
        self.placements = placements
    }

    /// Decodes with defaults.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        seed = try c.decodeIfPresent(UInt64.self, forKey: .seed) ?? 42
        networks = try c.decodeIfPresent([String: NetworkScenario].self, forKey: .networks) ?? [:]
        placements = try c.decodeIfPresent([String: NetworkScenario].self, forKey: .placements) ?? [:]
    }

    func scenario(network: String, placement: String?) -> NetworkScenario {
        if let placement, let specific = placements["\(network)/\(placement)"] { return specific }
        return networks[network] ?? NetworkScenario()
    }
}

/// SplitMix64: small, fast, seedable.
struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func nextUnit() -> Double { Double(next() >> 11) / Double(1 << 53) }
}

/// What the dice decided for one ad request.
struct Draw: Sendable {
    var fault: Fault?
    var fills: Bool
    var ecpm: Double
    var latency: Duration
}

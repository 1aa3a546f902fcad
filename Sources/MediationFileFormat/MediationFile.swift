import AdMediation
import AdTransport
import Foundation

// The JSON file form of the mediation configuration (docs/CONFIG.md): snake_case keys, times in `_ms` and `_s`
// fields, defaults for every optional field, and errors that name the field path. A key no type here knows is an
// error at its path, naming the nearest valid key (`placements.p.lines[0].floor_ecmp: unknown key; did you mean
// "floor_ecpm"?`), never a silently defaulted field. The core's types are plain values; this module reads and writes
// them, for the `mediate` CLI and for apps that ship or download the same file.

extension MediationConfiguration: Codable {
    enum CodingKeys: String, CodingKey, CaseIterable {
        case placements
        case circuitBreaker = "circuit_breaker"
    }

    /// Decodes the file form, with defaults for missing optional fields.
    public init(from decoder: any Decoder) throws {
        try decoder.rejectingUnknownKeys(CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            placements: try decoder.recovering([:]) {
                try container.decodeNamed(PlacementConfiguration.self, forKey: .placements, in: decoder)
            },
            circuitBreaker: try decoder.recovering(.init()) {
                try container.decodeIfPresent(CircuitBreakerConfiguration.self, forKey: .circuitBreaker) ?? .init()
            })
    }

    /// Encodes the file form.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(placements, forKey: .placements)
        try c.encode(circuitBreaker, forKey: .circuitBreaker)
    }

    /// Decodes the JSON file form, bounded by `JSONLimits`' defaults, turning decoding failures into a
    /// `configuration` `AdError` that names the field path (`placements.home.lines[1].timeout_ms: expected a
    /// number`): every problem found, one per line (the first 20, then how many more). A placement may name the
    /// core's formats (`AdFormat.Kind.builtIn`) and `formats`, the ones the app's adapters declare (each factory's
    /// `formats`: `MarsFactory.formats` for MARS's `tile`, `spoc` and `image`). Call `validate(networks:)` next.
    public static func decode(json: Data, formats: Set<AdFormat.Kind> = []) throws(AdError)
        -> MediationConfiguration
    {
        if let violation = JSONLimits().violation(in: json) {
            throw AdError(.configuration, "configuration: \(violation)")
        }
        let decoder = JSONDecoder()
        if let key = PlacementConfiguration.formatKindsKey {
            decoder.userInfo[key] = FormatKindSet(declaredFormatKinds: formats)
        }
        do {
            return try ProblemCollector.decode(MediationConfiguration.self, from: json, with: decoder)
        } catch let problems as ConfigurationProblems {
            throw problems.error
        } catch let error as DecodingError {
            throw AdError(.configuration, ConfigurationPath.describe(error))
        } catch {
            throw AdError(.configuration, "invalid configuration: \(error)")
        }
    }
}

extension CircuitBreakerConfiguration: Codable {
    enum CodingKeys: String, CodingKey, CaseIterable {
        case failureThreshold = "failure_threshold"
        case coolDownS = "cool_down_s"
    }

    /// Decodes the file form (`failure_threshold`, `cool_down_s`), with defaults.
    public init(from decoder: any Decoder) throws {
        try decoder.rejectingUnknownKeys(CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            failureThreshold: try decoder.recovering(5) { try c.decodeWholeIfPresent(forKey: .failureThreshold) ?? 5 },
            coolDown: try decoder.recovering(.seconds(30)) {
                try c.decodeSecondsIfPresent(forKey: .coolDownS, zeroAllowed: true) ?? .seconds(30)
            })
    }

    /// Encodes the file form (`cool_down_s`).
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(failureThreshold, forKey: .failureThreshold)
        try c.encode(coolDown.seconds, forKey: .coolDownS)
    }
}

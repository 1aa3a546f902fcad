import Foundation

/// Rests a network after repeated failures. No fill is not a failure.
public struct CircuitBreakerConfiguration: Codable, Sendable, Hashable {
    /// Consecutive failures (errors or timeouts) that open the breaker. Default 5.
    public var failureThreshold: Int
    /// How long an open breaker rests before one half-open probe. Default 30 s (JSON `cool_down_s`).
    public var coolDown: Duration

    /// Creates breaker settings.
    public init(failureThreshold: Int = 5, coolDown: Duration = .seconds(30)) {
        self.failureThreshold = failureThreshold
        self.coolDown = coolDown
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case failureThreshold = "failure_threshold"
        case coolDownS = "cool_down_s"
    }

    /// Decodes with defaults.
    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        failureThreshold = try c.decodeWholeIfPresent(forKey: .failureThreshold) ?? 5
        coolDown = try c.decodeSecondsIfPresent(forKey: .coolDownS, zeroAllowed: true) ?? .seconds(30)
    }

    /// Encodes the JSON form (`cool_down_s`).
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(failureThreshold, forKey: .failureThreshold)
        try c.encode(coolDown.seconds, forKey: .coolDownS)
    }

    func validate(path: String) throws(AdError) {
        if !(1...10_000).contains(failureThreshold) {
            throw AdError(.configuration, "\(path).failure_threshold: must be 1…10000, got \(failureThreshold)")
        }
        try Limits.checkSeconds(coolDown, field: "\(path).cool_down_s", zeroAllowed: true)
    }
}

/// Turns `DecodingError`s into `a.b[2].c: problem` messages.
extension KeyedDecodingContainer {
    /// A whole number read as a JSON number of any size: `1e308` is reported at its field ("must be a whole number
    /// …") rather than as unreadable JSON; range checks happen in validation.
    func decodeWholeIfPresent(forKey key: Key) throws -> Int? {
        guard let number = try decodeIfPresent(Double.self, forKey: key) else { return nil }
        guard let whole = OutsideValue.integer(number, in: Int.min...Int.max) else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: codingPath + [key], debugDescription: "must be a whole number, got \(number)"))
        }
        return whole
    }

    /// A `_ms` field: whole milliseconds within 1…600000, as a duration.
    func decodeMillisecondsIfPresent(forKey key: Key) throws -> Duration? {
        guard let milliseconds = try decodeWholeIfPresent(forKey: key) else { return nil }
        guard (1...Limits.maxMilliseconds).contains(milliseconds) else {
            throw DecodingError.dataCorruptedError(
                forKey: key, in: self, debugDescription: "must be 1…\(Limits.maxMilliseconds), got \(milliseconds)")
        }
        return .milliseconds(milliseconds)
    }

    /// A `_s` field: seconds within 0…7 days (over 0 unless `zeroAllowed`), as a duration.
    func decodeSecondsIfPresent(forKey key: Key, zeroAllowed: Bool) throws -> Duration? {
        guard let seconds = try decodeIfPresent(Double.self, forKey: key) else { return nil }
        guard (zeroAllowed ? seconds >= 0 : seconds > 0) && seconds <= Limits.maxSeconds,
            let duration = OutsideValue.duration(seconds: seconds)
        else {
            throw DecodingError.dataCorruptedError(
                forKey: key, in: self,
                debugDescription: Limits.secondsRange(zeroAllowed: zeroAllowed) + ", got \(seconds)")
        }
        return duration
    }
}

/// The ranges every number of the configuration must fall in (validation names the field and the range).
enum Limits {
    /// Deadlines and timeouts: at most 10 minutes.
    static let maxMilliseconds = 600_000
    /// Windows, intervals and cool-downs: at most 7 days.
    static let maxSeconds: Double = 7 * 24 * 3600
    /// Floors: at most 1 000 000 per mille.
    static let maxEcpm: Double = 1_000_000

    /// `must be 0…604800` or `must be over 0 and at most 604800`.
    static func secondsRange(zeroAllowed: Bool) -> String {
        zeroAllowed ? "must be 0…\(Int(maxSeconds))" : "must be over 0 and at most \(Int(maxSeconds))"
    }

    /// Throws unless `duration` is 1 ms…10 min, naming `field` (a `_ms` field) and the value in milliseconds.
    static func checkMilliseconds(_ duration: Duration, field: String) throws(AdError) {
        guard duration >= .milliseconds(1) && duration <= .milliseconds(maxMilliseconds) else {
            throw AdError(.configuration, "\(field): must be 1…\(maxMilliseconds), got \(duration.milliseconds)")
        }
    }

    /// Throws unless `duration` is within 0 (excluded unless `zeroAllowed`)…7 days, naming `field` (a `_s` field).
    static func checkSeconds(_ duration: Duration, field: String, zeroAllowed: Bool) throws(AdError) {
        let low = zeroAllowed ? duration >= .zero : duration > .zero
        guard low && duration <= .seconds(maxSeconds) else {
            throw AdError(
                .configuration, "\(field): \(secondsRange(zeroAllowed: zeroAllowed)), got \(duration.seconds)")
        }
    }
}

extension Duration {
    /// Whole milliseconds, rounded down (for `_ms` fields).
    var wholeMilliseconds: Int64 { nanosecondsClamped / 1_000_000 }
}

/// How configuration errors name their field: a `DecodingError` as `a.b[2].c: problem`.
package enum ConfigurationPath {
    /// The error as `path: problem` (`placements.home.lines[1].timeout_ms: expected a number`).
    package static func describe(_ error: DecodingError) -> String {
        switch error {
        case .typeMismatch(let type, let context):
            return "\(path(context.codingPath)): expected \(typeName(type)) (\(context.debugDescription))"
        case .valueNotFound(let type, let context):
            return "\(path(context.codingPath)): missing \(typeName(type))"
        case .keyNotFound(let key, let context):
            return "\(path(context.codingPath + [key])): required field is missing"
        case .dataCorrupted(let context):
            let at = context.codingPath.isEmpty ? "configuration" : path(context.codingPath)
            return "\(at): \(context.debugDescription)"
        @unknown default:
            return "configuration: \(error)"
        }
    }

    static func path(_ keys: [any CodingKey]) -> String {
        var text = ""
        for key in keys {
            if let index = key.intValue {
                text += "[\(index)]"
            } else {
                text += text.isEmpty ? key.stringValue : ".\(key.stringValue)"
            }
        }
        return text.isEmpty ? "configuration" : text
    }

    private static func typeName(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Int.Type, is Double.Type: "a number"
        case is Bool.Type: "a boolean"
        default: "\(type)"
        }
    }
}

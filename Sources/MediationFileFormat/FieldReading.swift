import AdMediation
import AdTransport

/// Numbers and times of the file form, refused at their field when out of range.
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

extension Duration {
    /// Whole milliseconds, rounded down (for `_ms` fields).
    var wholeMilliseconds: Int64 { nanosecondsClamped / 1_000_000 }
}

/// How configuration errors name their field: a `DecodingError` as `a.b[2].c: problem`.
public enum ConfigurationPath: Sendable {
    /// The error as `path: problem` (`placements.home.lines[1].timeout_ms: expected a number`).
    public static func describe(_ error: DecodingError) -> String {
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

import AdMediation
import AdTransport
import AdapterKit
import Foundation

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
        describe(error, in: nil)
    }

    /// The error as `path: problem`; a type mismatch names the value found at its path in `root` (the file decoded),
    /// bounded (``FoundValue``): `placements.home.lines[1].timeout_ms: expected a number, found the string "abc"`.
    /// A network's settings may be secrets (API keys, signatures): for them only the kind is named (`found a
    /// string`), never the value.
    static func describe(_ error: DecodingError, in root: FoundValue?) -> String {
        switch error {
        case .typeMismatch(let type, let context):
            let path = path(context.codingPath)
            // Foundation's own text (`Expected to decode Double but found a string instead.`) is replaced by ours;
            // a message of this module's own (`expected a string or a number`) is kept.
            let foundations = context.debugDescription.hasPrefix("Expected to decode")
            let expected = foundations ? "expected \(typeName(type))" : context.debugDescription
            guard let found = root?.value(at: context.codingPath) else {
                return foundations ? "\(path): \(expected) (\(context.debugDescription))" : "\(path): \(expected)"
            }
            let shown = isSetting(context.codingPath) ? found.kind : found.shown
            return "\(path): \(expected), found \(shown)"
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

    /// The keys of a network's object whose values are not its type's settings (which may be secrets).
    private static let networkKeys: Set<String> =
        Set(["type", "base_url"] + NetworkPrivacySettings.CodingKeys.allCases.map(\.stringValue))

    /// Whether `keys` is at or under a network's setting (`networks.gc.api_key`): a value never printed, as
    /// `mediate list` and `load --bodies` never print one.
    private static func isSetting(_ keys: [any CodingKey]) -> Bool {
        keys.count >= 3 && keys[0].stringValue == "networks" && !networkKeys.contains(keys[2].stringValue)
    }

    private static func typeName(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is any BinaryInteger.Type, is any BinaryFloatingPoint.Type: "a number"
        case is Bool.Type: "a boolean"
        case is [Any].Type: "an array"
        case is [String: Any].Type: "an object"
        default: "\(type)"
        }
    }
}

/// A JSON value as a configuration problem names it: read from the file once, when a type mismatch needs it, and
/// shown bounded (a string's first 40 characters, escaped; an object or array by its kind alone).
indirect enum FoundValue: Decodable, Sendable {
    case string(String)
    case number(Double)
    case boolean(Bool)
    case null
    case object([String: FoundValue])
    case array([FoundValue])
    /// A value that could not be read (a number beyond `Double`).
    case unreadable

    /// The most characters of a string shown.
    static let maxShown = 40

    /// The file's value, or nil when it is not JSON.
    static func parse(_ data: Data) -> FoundValue? {
        try? JSONDecoder().decode(FoundValue.self, from: data)
    }

    /// Reads any value: its members one by one (one unreadable member does not hide the others).
    init(from decoder: any Decoder) throws {
        if let object = try? decoder.container(keyedBy: ConfigurationKey.self) {
            var members: [String: FoundValue] = [:]
            for key in object.allKeys {
                members[key.stringValue] = (try? object.decode(Self.self, forKey: key)) ?? .unreadable
            }
            self = .object(members)
        } else if var array = try? decoder.unkeyedContainer() {
            var items: [FoundValue] = []
            while !array.isAtEnd {
                guard let item = try? array.decode(Self.self) else { break }
                items.append(item)
            }
            self = .array(items)
        } else {
            let value = try decoder.singleValueContainer()
            if value.decodeNil() {
                self = .null
            } else if let flag = try? value.decode(Bool.self) {
                self = .boolean(flag)
            } else if let number = try? value.decode(Double.self) {
                self = .number(number)
            } else if let text = try? value.decode(String.self) {
                self = .string(text)
            } else {
                self = .unreadable
            }
        }
    }

    /// The value at `path` (keys by name, array items by index), or nil.
    func value(at path: [any CodingKey]) -> FoundValue? {
        var value = self
        for key in path {
            switch value {
            case .object(let members):
                guard let member = members[key.stringValue] else { return nil }
                value = member
            case .array(let items):
                guard let index = key.intValue, items.indices.contains(index) else { return nil }
                value = items[index]
            default:
                return nil
            }
        }
        return value
    }

    /// What it is, without its value: `a string`, `a number`, `a boolean`, `null`, `an object`, `an array`.
    var kind: String {
        switch self {
        case .string: "a string"
        case .number: "a number"
        case .boolean: "a boolean"
        case .null: "null"
        case .object: "an object"
        case .array: "an array"
        case .unreadable: "a value"
        }
    }

    /// It as a problem shows it: `the string "abc"` (at most ``maxShown`` characters, escaped), `the number 12`,
    /// `true`, `null`; an object or an array by its kind and size.
    var shown: String {
        switch self {
        case .string(let text):
            let bounded = text.count > Self.maxShown ? text.prefix(Self.maxShown) + "…" : text
            return "the string \(String(bounded).debugDescription)"
        case .number(let number):
            let whole = number.rounded() == number && abs(number) < 1e15
            return "the number \(whole ? String(Int64(number)) : "\(number)")"
        case .boolean(let flag): return "\(flag)"
        case .object(let members): return members.isEmpty ? "an empty object" : "an object"
        case .array(let items): return "an array of \(items.count) item\(items.count == 1 ? "" : "s")"
        case .null, .unreadable: return kind
        }
    }
}

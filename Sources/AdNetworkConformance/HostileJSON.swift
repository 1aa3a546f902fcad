import AdapterKit
import Foundation

/// Hostile values for an adapter's decoder tests: take a valid answer, put one hostile value at one field, and check
/// that the decoder ends with a documented outcome (the value clamped, ignored, or the item invalid), never a trap.
public enum HostileJSON {
    /// One hostile value and its name (for test output).
    public struct Value: Sendable, CustomStringConvertible {
        /// A short name: `huge`, `negative`, `wrong_type`, …
        public var name: String
        /// The JSON text of the value.
        public var json: String
        /// `name`.
        public var description: String { name }

        /// A value: its name and its JSON text.
        public init(name: String, json: String) {
            self.name = name
            self.json = json
        }
    }

    /// `1e308`.
    public static let huge = Value(name: "huge", json: "1e308")
    /// `-1e308`.
    public static let hugeNegative = Value(name: "huge_negative", json: "-1e308")
    /// `9223372036854775807` (Int64.max).
    public static let int64Max = Value(name: "int64_max", json: "9223372036854775807")
    /// `-5`.
    public static let negative = Value(name: "negative", json: "-5")
    /// `"12"`: a number's digits in a string.
    public static let wrongType = Value(name: "wrong_type", json: #""12""#)
    /// `null`.
    public static let null = Value(name: "null", json: "null")
    /// `""`.
    public static let emptyString = Value(name: "empty_string", json: #""""#)
    /// `true`.
    public static let boolean = Value(name: "boolean", json: "true")
    /// `0.5`.
    public static let fraction = Value(name: "fraction", json: "0.5")

    /// Every hostile value for a numeric field.
    public static let numeric: [Value] = [
        huge, hugeNegative, int64Max, negative, wrongType, null, emptyString, boolean, fraction,
    ]

    /// `json` with the member at `path` (object keys; an integer key indexes an array) replaced by `value`'s JSON.
    /// Returns nil when `json` is not JSON or the path does not lead to an existing container.
    public static func replacing(_ path: [String], in json: String, with value: Value) -> Data? {
        guard let root = try? JSONDecoder().decode(JSONValue.self, from: Data(json.utf8)) else { return nil }
        let marker = "__hostile_\(UUID().uuidString)__"
        guard let replaced = set(path[...], in: root, to: .string(marker)) else { return nil }
        let text = replaced.description.replacingOccurrences(of: "\"\(marker)\"", with: value.json)
        return Data(text.utf8)
    }

    private static func set(_ path: ArraySlice<String>, in node: JSONValue, to marker: JSONValue) -> JSONValue? {
        guard let key = path.first else { return marker }
        switch node {
        case .object(var members):
            let child = members[key] ?? .object([:])
            guard let updated = path.count == 1 ? marker : set(path.dropFirst(), in: child, to: marker) else {
                return nil
            }
            members[key] = updated
            return .object(members)
        case .array(var elements):
            guard let index = Int(key), elements.indices.contains(index),
                let updated = path.count == 1 ? marker : set(path.dropFirst(), in: elements[index], to: marker)
            else { return nil }
            elements[index] = updated
            return .array(elements)
        default:
            return nil
        }
    }
}

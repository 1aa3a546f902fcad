import AdapterKit
import Foundation

// The JSON values and the subset rule of wire fixtures (see WireFixtures.swift and docs/RELIABILITY.md).

/// What wire fixtures read JSON with: AdapterKit's `JSONValue` (numbers compared as numbers, objects by key).
extension JSONValue {
    /// Parses JSON text; nil when it is not JSON.
    public static func parse(_ bytes: [UInt8]) -> JSONValue? {
        try? JSONDecoder().decode(JSONValue.self, from: Data(bytes))
    }

    /// The value at a dotted path (`imp.0.banner.w`): object keys, or array indexes.
    public func value(at path: String) -> JSONValue? {
        var current: JSONValue? = self
        for part in path.split(separator: ".") {
            switch current {
            case .object(let members): current = members[String(part)]
            case .array(let values):
                guard let index = Int(part), values.indices.contains(index) else { return nil }
                current = values[index]
            default: return nil
            }
        }
        return current
    }
}

/// One difference between what a fixture expects and what happened.
public struct WireFixtureMismatch: Sendable, Equatable, CustomStringConvertible {
    /// Where, as a path into the fixture (`http_calls[0].expected_request.body.privacy.gdpr`).
    public var path: String
    /// What the fixture expects.
    public var expected: String
    /// What the adapter did.
    public var actual: String

    /// Creates a mismatch.
    public init(path: String, expected: String, actual: String) {
        self.path = path
        self.expected = expected
        self.actual = actual
    }

    /// `path: expected X, got Y`.
    public var description: String { "\(path): expected \(expected), got \(actual)" }
}

/// The subset rule of wire fixtures: every expected key present with an equal value, numbers compared as numbers,
/// arrays element by element with the same length. Three markers stand for a value: `{"$absent": true}` (the key must
/// not be there), `{"$present": true}` (any value) and `{"$pattern": "regex"}` (a string the regular expression
/// matches somewhere; anchor it with `^…$`).
public enum FixtureMatch {
    /// The mismatches of `actual` against `expected`, each named by `path`.
    public static func mismatches(expected: JSONValue, actual: JSONValue?, path: String) -> [WireFixtureMismatch] {
        if case .object(let members) = expected, members.count == 1, let marker = members.first,
            marker.key.hasPrefix("$")
        {
            return markerMismatches(marker.key, marker.value, actual: actual, path: path)
        }
        guard let actual else {
            // An absent object satisfies an expected object whose members may all be absent.
            if case .object(let members) = expected, !members.isEmpty {
                return members.keys.sorted().flatMap { key in
                    mismatches(expected: members[key] ?? .null, actual: nil, path: path + "." + key)
                }
            }
            return [WireFixtureMismatch(path: path, expected: "\(expected)", actual: "absent")]
        }
        switch (expected, actual) {
        case (.object(let wanted), .object(let got)):
            return wanted.keys.sorted().flatMap { key in
                mismatches(expected: wanted[key] ?? .null, actual: got[key], path: path + "." + key)
            }
        case (.array(let wanted), .array(let got)):
            guard wanted.count == got.count else {
                return [
                    WireFixtureMismatch(
                        path: path, expected: "\(wanted.count) elements \(expected)",
                        actual: "\(got.count) elements \(actual)")
                ]
            }
            return zip(wanted, got).enumerated().flatMap { index, pair in
                mismatches(expected: pair.0, actual: pair.1, path: "\(path)[\(index)]")
            }
        default:
            return expected == actual
                ? [] : [WireFixtureMismatch(path: path, expected: "\(expected)", actual: "\(actual)")]
        }
    }

    private static func markerMismatches(
        _ marker: String, _ argument: JSONValue, actual: JSONValue?, path: String
    ) -> [WireFixtureMismatch] {
        switch (marker, argument) {
        case ("$absent", .bool(true)):
            guard let actual else { return [] }
            return [WireFixtureMismatch(path: path, expected: "absent", actual: "\(actual)")]
        case ("$present", .bool(true)):
            return actual == nil ? [WireFixtureMismatch(path: path, expected: "present", actual: "absent")] : []
        case ("$pattern", .string(let pattern)):
            guard let regex = try? Regex(pattern) else {
                return [WireFixtureMismatch(path: path, expected: "a valid pattern", actual: "invalid \(pattern)")]
            }
            guard case .string(let text) = actual, text.contains(regex) else {
                return [
                    WireFixtureMismatch(
                        path: path, expected: "a string matching \(pattern)",
                        actual: actual.map(\.description) ?? "absent")
                ]
            }
            return []
        default:
            return [WireFixtureMismatch(path: path, expected: "$absent, $present or $pattern", actual: marker)]
        }
    }
}

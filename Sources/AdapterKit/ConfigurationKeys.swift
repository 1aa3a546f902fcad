import AdTransport
import Foundation

extension Decoder {
    /// Refuses an object with a key that `Keys` does not list (nor `besides`): throws `DecodingError.dataCorrupted` at
    /// the key's path, naming the nearest valid key (`unknown key; did you mean "floor_ecpm"?`) or, when none is near,
    /// every valid key. Call it first in an `init(from:)`, so that a misspelt key is never read as the default value
    /// (a floor silently 0). A value that is not an object is left to the caller's own decoding to report.
    public func rejectUnknownKeys<Keys: CodingKey & CaseIterable>(_ keys: Keys.Type, besides: [String] = []) throws {
        try rejectUnknownKeys(allowing: keys.allCases.map(\.stringValue) + besides)
    }

    /// ``rejectUnknownKeys(_:besides:)`` with the valid keys as strings; `what` starts the message (`unknown key for
    /// type chartboost`). When this decoder collects problems (the file format's `ProblemCollector`), every unknown
    /// key is recorded instead, and nothing is thrown.
    public func rejectUnknownKeys(allowing valid: [String], what: String = "unknown key") throws {
        guard let object = try? container(keyedBy: ConfigurationKey.self) else { return }
        let known = Set(valid)
        let present = Set(object.allKeys.map(\.stringValue))
        let unknown = present.filter { !known.contains($0) }.sorted()
        guard let recorder = DecodingProblems.recorder(of: self) else {
            guard let key = unknown.first else { return }
            throw Self.unknownKeyError(key, at: codingPath, valid: valid, what: what)
        }
        for key in unknown {
            // A misspelt key (`baseurl`) leaves the key it was meant for absent: that is this problem, not another.
            if let meant = ConfigurationKeys.nearest(to: key, in: valid), !present.contains(meant) {
                recorder.expectAbsent(codingPath + [ConfigurationKey(meant)])
            }
            recorder.record(Self.unknownKeyError(key, at: codingPath, valid: valid, what: what))
        }
    }

    private static func unknownKeyError(_ key: String, at path: [any CodingKey], valid: [String], what: String)
        -> DecodingError
    {
        .dataCorrupted(
            .init(
                codingPath: path + [ConfigurationKey(ConfigurationKeys.shown(key))],
                debugDescription: ConfigurationKeys.unknownKey(key, valid: valid, what: what)))
    }

    /// `body`'s value. When this decoder collects problems (`DecodingProblems`), a `DecodingError` that `body`
    /// throws is recorded and `fallback` is returned instead, so reading goes on to the next field and every problem
    /// of a network's settings is found in one pass (the value read is thrown away in the end). Without a collector
    /// the error is thrown, as any `Decodable` does. The file format's public `recovering(_:_:)` is this.
    package func collecting<T>(_ fallback: @autoclosure () -> T, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as DecodingError {
            guard let recorder = DecodingProblems.recorder(of: self) else { throw error }
            recorder.record(error)
            return fallback()
        }
    }
}

/// Where a decoder that lists every problem instead of stopping at the first keeps what records them: the
/// `MediationFileFormat` module's `ProblemCollector`, in the decoder's `userInfo`. The core reads it so that the
/// built-in adapters' settings (`Decoder.collecting(_:_:)`) and unknown keys (`Decoder.rejectUnknownKeys`) are
/// collected the same way as the file's own fields.
package enum DecodingProblems {
    /// The `userInfo` key of the recorder.
    package static let key: CodingUserInfoKey? = CodingUserInfoKey(rawValue: "mediation.problems")

    /// The recorder `decoder` carries, if any.
    package static func recorder(of decoder: any Decoder) -> (any DecodingProblemRecorder)? {
        key.flatMap { decoder.userInfo[$0] as? any DecodingProblemRecorder }
    }
}

/// Records the problems of one decoding (`DecodingProblems`).
package protocol DecodingProblemRecorder: AnyObject, Sendable {
    /// Records `error` and lets decoding go on.
    func record(_ error: DecodingError)
    /// The key at `path` is absent because an unknown key, recorded already, was meant for it: its absence is not a
    /// second problem.
    func expectAbsent(_ path: [any CodingKey])
}

/// Any key of a configuration object (for objects keyed by names the file chooses, and for error paths).
public struct ConfigurationKey: CodingKey, Hashable, Sendable {
    /// The key as the file spells it.
    public let stringValue: String
    /// Always nil: configuration objects are keyed by name.
    public var intValue: Int? { nil }

    /// The key `name`.
    public init(_ name: String) { stringValue = name }
    /// The key `stringValue`.
    public init?(stringValue: String) { self.stringValue = stringValue }
    /// Nil: configuration objects are keyed by name.
    public init?(intValue: Int) { nil }
}

/// The messages for an unknown key: the nearest valid key by edit distance, or the list of valid keys.
package enum ConfigurationKeys {
    /// `unknown key; did you mean "floor_ecpm"?`, or `unknown key (valid keys: a, b)` when no valid key is within two
    /// edits (case ignored).
    package static func unknownKey(_ key: String, valid: [String], what: String = "unknown key") -> String {
        if let near = nearest(to: key, in: valid) { return "\(what); did you mean \"\(near)\"?" }
        let list = Set(valid).sorted()
        return list.isEmpty ? "\(what) (it has none)" : "\(what) (valid keys: \(list.joined(separator: ", ")))"
    }

    /// The valid key nearest to `key` within two edits (Damerau–Levenshtein, optimal string alignment: insertions,
    /// deletions, substitutions and swaps of neighbours; case ignored), preferring the first in sorted order on a tie;
    /// else a valid key that is `key` with a unit suffix (`timeout` → `timeout_ms`). Nil when none is that near, or
    /// when `key` is no longer than the distance (a one-letter key suggests nothing).
    package static func nearest(to key: String, in valid: [String]) -> String? {
        if let near = nearestByEdits(to: key, in: valid) { return near }
        let stem = key.lowercased() + "_"
        return key.isEmpty ? nil : Set(valid).sorted().first { $0.lowercased().hasPrefix(stem) }
    }

    private static func nearestByEdits(to key: String, in valid: [String]) -> String? {
        let typed = Array(key.lowercased().unicodeScalars)
        var best: (key: String, distance: Int)?
        for candidate in Set(valid).sorted() {
            let target = Array(candidate.lowercased().unicodeScalars)
            guard abs(typed.count - target.count) <= 2 else { continue }
            let distance = distance(typed, target)
            if distance <= 2, distance < typed.count, distance < (best?.distance ?? Int.max) {
                best = (candidate, distance)
            }
        }
        return best?.key
    }

    /// The optimal-string-alignment distance between `a` and `b`.
    static func distance(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar]) -> Int {
        if a.isEmpty || b.isEmpty { return max(a.count, b.count) }
        // Three rows: the one before the previous (for swaps), the previous and the current.
        var before = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                var value = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] { value = min(value, before[j - 2] + 1) }
                current[j] = value
            }
            (before, previous, current) = (previous, current, before)
        }
        return previous[b.count]
    }

    /// A key as an error shows it: at most 64 characters.
    static func shown(_ key: String) -> String { key.count <= 64 ? key : key.prefix(64) + "…" }
}

/// Reading a network's settings the way `mediate`'s file always accepted them: text settings are strings (a number
/// is taken as written), whole numbers may be written as numbers or digits in a string. Errors are `DecodingError`s at
/// the field (`networks.m.cache_ttl_s: must be a whole number 1…604800, got "0"`).
extension KeyedDecodingContainer {
    /// The setting at `key` as text: a string, or a number as written (`123`); nil when absent. Anything else (an
    /// object, a boolean, null) is a type mismatch `expected a string or a number` (the file format names what it
    /// found: `found an object`).
    package func decodeSettingText(forKey key: Key) throws -> String? {
        guard contains(key) else { return nil }
        if let text = try? decode(String.self, forKey: key) { return text }
        if let whole = try? decode(Int64.self, forKey: key) { return String(whole) }
        if let number = try? decode(Double.self, forKey: key) { return "\(number)" }
        throw DecodingError.typeMismatch(
            String.self, .init(codingPath: codingPath + [key], debugDescription: "expected a string or a number"))
    }

    /// The setting at `key`, which networks of `type` need: absent or empty is an error (`required for type
    /// chartboost`).
    package func decodeRequiredSetting(forKey key: Key, type: String) throws -> String {
        guard let text = try decodeSettingText(forKey: key), !text.isEmpty else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: codingPath + [key], debugDescription: "required for type \(type)"))
        }
        return text
    }

    /// The setting at `key` as a whole number in `range` (a number, or its digits in a string); nil when absent.
    package func decodeWholeSetting(forKey key: Key, in range: ClosedRange<Int>) throws -> Int? {
        guard let text = try decodeSettingText(forKey: key) else { return nil }
        guard let value = OutsideValue.integer(text, in: range) else {
            throw DecodingError.dataCorruptedError(
                forKey: key, in: self,
                debugDescription: "must be a whole number \(range.lowerBound)…\(range.upperBound), got "
                    + "\"\(text.prefix(40))\"")
        }
        return value
    }

    /// The setting at `key` as an absolute URL (with a scheme and a host); nil when absent, unless `required`.
    package func decodeURLSetting(forKey key: Key, required: Bool = false) throws -> String? {
        let text = try decodeSettingText(forKey: key)
        if text == nil && !required { return nil }
        guard let text, let url = URL(string: text), url.scheme != nil, url.host != nil else {
            throw DecodingError.dataCorruptedError(forKey: key, in: self, debugDescription: "required, an absolute URL")
        }
        return text
    }

    /// The setting at `key` as a boolean: `true`/`false`, or the strings `"true"`/`"false"`; nil when absent.
    package func decodeFlagSetting(forKey key: Key) throws -> Bool? {
        guard contains(key) else { return nil }
        if let flag = try? decode(Bool.self, forKey: key) { return flag }
        switch try? decode(String.self, forKey: key) {
        case "true": return true
        case "false": return false
        default:
            throw DecodingError.dataCorruptedError(forKey: key, in: self, debugDescription: "must be true or false")
        }
    }
}

import AdMediation
import AdapterKit
import Foundation

/// Every problem a configuration file's decoding found, not only the first (issue 47): a user fixing a file sees them
/// all at once. Each is `path: problem`, naming the field and, where the problem is its value, the value
/// (`placements.home.lines[1].timeout_ms: must be 1…600000, got 0`). The first ``limit`` are kept; ``total`` counts
/// them all.
public struct ConfigurationProblems: Error, Hashable, Sendable {
    /// The most problems kept (and shown): a file with hundreds of broken entries is not printed whole.
    public static let limit = Limits.maxProblemsListed

    /// Always `AdError.Code.configuration`.
    public var code: AdError.Code { .configuration }
    /// The problems found, in the file's order (networks, placements, then circuit_breaker), at most ``limit``.
    public var messages: [String]
    /// How many problems were found (``messages`` holds the first ``limit``).
    public var total: Int

    /// `messages`, found `total` in all.
    public init(_ messages: [String], total: Int? = nil) {
        self.messages = Array(messages.prefix(Self.limit))
        self.total = max(total ?? messages.count, self.messages.count)
    }

    /// The lines a user reads: each problem, then `… and 5 more problems` when some were left out.
    public var lines: [String] { Limits.listed(messages, total: total) }

    /// One `AdError.Code.configuration` error listing them, one per line (a single problem is its message alone).
    public var error: AdError { AdError(.configuration, lines.joined(separator: "\n")) }
}

/// Collects the `DecodingError`s of one decoding (``ConfigurationProblems``) instead of stopping at the first. It sits
/// in the decoder's `userInfo`; the file form's types ask for it through `Decoder.recovering(_:_:)` and, when
/// it is absent (a plain `JSONDecoder`), throw at the first problem as any `Decodable` does.
public final class ProblemCollector: Sendable, DecodingProblemRecorder {
    private struct State {
        var errors: [DecodingError] = []
        var total = 0
        /// The paths of absent keys an unknown key was taken for (`networks.ao.base_url` for `baseurl`): their
        /// absence is the same problem, not a second one.
        var misspelt: Set<String> = []
    }
    private let state = LockedValue(State())

    /// Where the collector sits in a decoder's `userInfo` (the core's key: the built-in adapters' settings are
    /// collected through it too).
    static var key: CodingUserInfoKey? { DecodingProblems.key }

    /// An empty collector.
    public init() {}

    /// Records `error` (the first ``ConfigurationProblems/limit`` are kept, all are counted), unless it is at the
    /// path of an absent key already reported as misspelt (``expectAbsent(_:)``).
    package func record(_ error: DecodingError) {
        let path = Self.path(of: error)
        state.withLock { state in
            guard !state.misspelt.contains(path) else { return }
            state.total += 1
            if state.errors.count < ConfigurationProblems.limit { state.errors.append(error) }
        }
    }

    /// The key at `path` is absent because an unknown key, reported already, was meant for it.
    package func expectAbsent(_ path: [any CodingKey]) {
        let path = ConfigurationPath.path(path)
        state.withLock { _ = $0.misspelt.insert(path) }
    }

    /// The field `error` is at, as ``ConfigurationPath`` writes it.
    private static func path(of error: DecodingError) -> String {
        switch error {
        case .keyNotFound(let key, let context): ConfigurationPath.path(context.codingPath + [key])
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            ConfigurationPath.path(context.codingPath)
        @unknown default: ""
        }
    }

    /// Whether any problem was recorded.
    private var found: Bool { state.withLock { $0.total > 0 } }

    /// The problems recorded so far, nil when there is none; a type mismatch names the value found in `data` (the
    /// file decoded), never a network setting's value (``ConfigurationPath``).
    func problems(in data: Data?) -> ConfigurationProblems? {
        let (errors, total) = state.withLock { ($0.errors, $0.total) }
        guard total > 0 else { return nil }
        let root = errors.contains(where: Self.isTypeMismatch) ? data.flatMap(FoundValue.parse) : nil
        return ConfigurationProblems(errors.map { ConfigurationPath.describe($0, in: root) }, total: total)
    }

    private static func isTypeMismatch(_ error: DecodingError) -> Bool {
        if case .typeMismatch = error { return true }
        return false
    }

    /// Decodes `type` from `data` with every problem collected: throws ``ConfigurationProblems`` when any was found
    /// (an error decoding could not go past, such as a root that is not an object, is the last of them). A root
    /// that is not JSON or not an object is thrown as the `DecodingError` it is, for the caller to describe.
    public static func decode<T: Decodable>(_ type: T.Type, from data: Data, with decoder: JSONDecoder) throws -> T {
        let collector = ProblemCollector()
        if let key { decoder.userInfo[key] = collector }
        let value: T
        do {
            value = try decoder.decode(type, from: data)
        } catch let error as DecodingError {
            guard collector.found else { throw error }
            collector.record(error)
            throw collector.problems(in: data) ?? ConfigurationProblems([ConfigurationPath.describe(error)])
        }
        if let problems = collector.problems(in: data) { throw problems }
        return value
    }
}

extension Decoder {
    /// `body`'s value. When this decoder collects problems (``ProblemCollector``), a `DecodingError` that `body`
    /// throws is recorded and `fallback` is returned instead, so decoding goes on to find the next problem; the
    /// value decoded is thrown away in the end. Without a collector the error is thrown.
    public func recovering<T>(_ fallback: @autoclosure () -> T, _ body: () throws -> T) throws -> T {
        try collecting(fallback(), body)
    }

    /// `Decoder.rejectUnknownKeys(_:besides:)`, recording every unknown key when this decoder collects
    /// problems (each naming the nearest valid key), not only the first.
    public func rejectingUnknownKeys<Keys: CodingKey & CaseIterable>(_ keys: Keys.Type) throws {
        try rejectingUnknownKeys(allowing: keys.allCases.map(\.stringValue))
    }

    /// ``rejectingUnknownKeys(_:)`` with the valid keys as strings; `what` starts each message.
    public func rejectingUnknownKeys(allowing valid: [String], what: String = "unknown key") throws {
        // The core's check records every unknown key itself when this decoder collects problems.
        try rejectUnknownKeys(allowing: valid, what: what)
    }
}

extension KeyedDecodingContainer {
    /// The object at `key` whose keys the file names (`placements`, `networks`): each entry decoded apart, so that,
    /// with problems collected, one bad entry does not hide the next. Entries that fail are left out.
    public func decodeNamed<T: Decodable>(_ type: T.Type, forKey key: Key, in decoder: any Decoder) throws
        -> [String: T]
    {
        let object = try nestedContainer(keyedBy: ConfigurationKey.self, forKey: key)
        var values: [String: T] = [:]
        for name in object.allKeys.sorted(by: { $0.stringValue < $1.stringValue }) {
            let value: T? = try decoder.recovering(nil) { try object.decode(type, forKey: name) }
            if let value { values[name.stringValue] = value }
        }
        return values
    }
}

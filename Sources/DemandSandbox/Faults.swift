import AdMediation
import AdTransport
import AdapterKit
import Foundation
import Synchronization

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

    enum CodingKeys: String, CodingKey, CaseIterable { case kind, rate, status, retryAfterS = "retry_after_s" }

    /// Decodes with defaults.
    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        kind = try c.decode(Kind.self, forKey: .kind)
        rate = try c.decodeIfPresent(Double.self, forKey: .rate) ?? 1
        // Whole numbers are read as Double first, so that 1e308 is "out of range" at its field, not unreadable JSON.
        func whole(_ key: CodingKeys, _ range: ClosedRange<Int>, default value: Int) throws -> Int {
            guard let number = try c.decodeIfPresent(Double.self, forKey: key) else { return value }
            guard let whole = OutsideValue.integer(number, in: range) else {
                throw DecodingError.dataCorrupted(
                    .init(
                        codingPath: c.codingPath + [key],
                        debugDescription:
                            "must be a whole number \(range.lowerBound)…\(range.upperBound), got \(number)"))
            }
            return whole
        }
        status = try whole(.status, Self.statuses, default: 500)
        retryAfterS = try whole(.retryAfterS, 0...604_800, default: 1)
        guard (0...1).contains(rate) else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: c.codingPath + [CodingKeys.rate], debugDescription: "must be 0…1, got \(rate)"))
        }
    }

    /// The statuses a fault may inject; others (set in code) are answered as 500.
    static let statuses = 100...599
}

/// A fault injected into a route module's request that is not an ad request (``NetworkScenario/validationFaults``;
/// GrowthCat's reward validations): the ways a validation's answer goes missing. The module draws it
/// (`SandboxReply.withRequestFault`) and gives each kind its meaning; GrowthCat processes `lost_answer` and
/// `late_answer` first — a reward they grant is granted and recorded — which is what idempotency by `sdk_event_id`
/// must cover: the client's retry gets the first answer again.
public struct ValidationFault: Codable, Sendable, Hashable {
    /// What goes wrong.
    public enum Kind: String, Codable, Sendable, Hashable, CaseIterable {
        /// Answer with `status` (default 503) without processing.
        case status
        /// Reset the connection without processing and without an answer.
        case reset
        /// Process (grant or refuse, and record), then reset the connection: the answer is lost.
        case lostAnswer = "lost_answer"
        /// Process, then answer after `delay_ms` (past the client's timeout, for a short enough timeout).
        case lateAnswer = "late_answer"
    }

    /// What goes wrong.
    public var kind: Kind
    /// Probability per attempt (0…1).
    public var rate: Double
    /// The status for `status` faults (100…599). Default 503.
    public var status: Int
    /// How late a `late_answer` comes, in milliseconds (0…60 000). Default 1000.
    public var delayMs: Int

    /// Creates a fault.
    public init(_ kind: Kind, rate: Double = 1, status: Int = 503, delayMs: Int = 1000) {
        self.kind = kind
        self.rate = rate
        self.status = status
        self.delayMs = delayMs
    }

    enum CodingKeys: String, CodingKey, CaseIterable { case kind, rate, status, delayMs = "delay_ms" }

    /// Decodes with defaults and checks the ranges.
    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        kind = try c.decode(Kind.self, forKey: .kind)
        rate = try c.decodeIfPresent(Double.self, forKey: .rate) ?? 1
        guard (0...1).contains(rate) else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: c.codingPath + [CodingKeys.rate], debugDescription: "must be 0…1, got \(rate)"))
        }
        func whole(_ key: CodingKeys, _ range: ClosedRange<Int>, default value: Int) throws -> Int {
            guard let number = try c.decodeIfPresent(Double.self, forKey: key) else { return value }
            guard let whole = OutsideValue.integer(number, in: range) else {
                throw DecodingError.dataCorrupted(
                    .init(
                        codingPath: c.codingPath + [key],
                        debugDescription:
                            "must be a whole number \(range.lowerBound)…\(range.upperBound), got \(number)"))
            }
            return whole
        }
        status = try whole(.status, Fault.statuses, default: 503)
        delayMs = try whole(.delayMs, 0...60_000, default: 1000)
    }
}

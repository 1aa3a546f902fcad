import Foundation

/// The CLI's JSON: an `Encodable` report model as text, its keys sorted — the order every `--json` output has had,
/// so two runs' files differ only where their figures do. Each model names its keys (`CodingKeys`) and says which
/// are written as `null` and which are left out; none builds a dictionary to read back.
enum ReportJSON {
    /// `value` as JSON text: indented unless `compact`, `/` written as is unless `escapingSlashes`. Nil when it
    /// cannot be written (a non-finite number).
    static func data<Value: Encodable>(
        _ value: Value, compact: Bool = false, escapingSlashes: Bool = false
    ) -> Data? {
        let encoder = JSONEncoder()
        var formatting: JSONEncoder.OutputFormatting = [.sortedKeys]
        if !compact { formatting.insert(.prettyPrinted) }
        if !escapingSlashes { formatting.insert(.withoutEscapingSlashes) }
        encoder.outputFormatting = formatting
        return try? encoder.encode(value)
    }

    /// ``data(_:compact:escapingSlashes:)`` as a string; empty when the value cannot be written.
    static func text<Value: Encodable>(_ value: Value, compact: Bool = false, escapingSlashes: Bool = false) -> String {
        String(decoding: data(value, compact: compact, escapingSlashes: escapingSlashes) ?? Data(), as: UTF8.self)
    }
}

/// A latency summary: p50, p95 and p99 in milliseconds, exact; the JSON rounds each to 3 decimals.
struct LatencyFigures: Encodable, Sendable {
    var p50: Double
    var p95: Double
    var p99: Double

    /// The percentiles of `tally`.
    init(_ tally: Tally) {
        p50 = tally.percentileMs(50)
        p95 = tally.percentileMs(95)
        p99 = tally.percentileMs(99)
    }

    enum CodingKeys: String, CodingKey {
        case p50, p95, p99
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(round3(p50), forKey: .p50)
        try container.encode(round3(p95), forKey: .p95)
        try container.encode(round3(p99), forKey: .p99)
    }
}

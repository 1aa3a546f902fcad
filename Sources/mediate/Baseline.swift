import AdMediation
import AdTransport
import AdapterKit
import Foundation

/// `--baseline OLD.json`: a previous `mediate compare --format json` output, read back for the summary's "what
/// changed". Only what the summary compares is read (per placement: fill rate, revenue per 1000 requests, p95); the
/// file is outside input, so it is bounded and every field is checked, and an error names the file and the field.
struct Baseline: Sendable {
    /// The waterfall's figures of one placement in the baseline run.
    struct Placement: Sendable {
        var fillRate: Double
        var revenuePerMille: Double
        var p95Ms: Double
        /// The waterfall's fills and requests, when the file has them: the fill change's interval.
        var counts: (successes: Int, trials: Int)? = nil
        /// `revenue.per_1000_requests_usd_ci95`, when the file has it: the revenue change's interval.
        var revenueInterval: Statistics.Interval? = nil
    }

    /// The file's name as given.
    var name: String
    /// By placement id.
    var placements: [String: Placement]

    /// The largest baseline file read (a 20 000-request run of many placements is far smaller).
    static let maxBytes = 32 << 20

    /// Reads and checks `path`, at most ``maxBytes`` + 1 bytes.
    static func read(path: String) throws(AdError) -> Baseline {
        let shown = TerminalText.escaped(path)
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw AdError(.configuration, "--baseline: cannot read \(shown)")
        }
        defer { try? handle.close() }
        var data = Data()
        do {
            while data.count <= maxBytes {
                guard let chunk = try handle.read(upToCount: maxBytes + 1 - data.count), !chunk.isEmpty else { break }
                data.append(chunk)
            }
        } catch {
            throw AdError(.configuration, "--baseline: cannot read \(shown): \(error.localizedDescription)")
        }
        return try parse(data, name: path)
    }

    /// Parses a `--format json` output; `name` names the file in errors.
    static func parse(_ data: Data, name: String) throws(AdError) -> Baseline {
        let shown = TerminalText.escaped(name)
        let hint = " (expected the output of `mediate compare --format json`)"
        func fail(_ what: String) -> AdError { AdError(.configuration, "--baseline \(shown): \(what)\(hint)") }
        let limits = JSONLimits(maxBytes: maxBytes, maxDepth: 16, maxStringBytes: 16 << 10, maxItems: 100_000)
        if let violation = limits.violation(in: data) { throw fail(violation) }
        guard let root = try? JSONDecoder().decode(JSONValue.self, from: data) else { throw fail("not JSON") }
        guard case .object(let object) = root else { throw fail("not a JSON object") }
        guard case .array(let list)? = object["placements"] else { throw fail("no \"placements\" array") }
        var placements: [String: Placement] = [:]
        for (index, item) in list.enumerated() {
            let path = "placements[\(index)]"
            guard case .object(let entry) = item else { throw fail("\(path) is not an object") }
            guard case .string(let id)? = entry["id"], !id.isEmpty else { throw fail("\(path).id: not a string") }
            func number(_ value: JSONValue?, _ field: String, in range: ClosedRange<Double>) throws(AdError) -> Double {
                guard let double = value?.number else {
                    throw fail("\(path).\(field): not a number")
                }
                guard double.isFinite, range.contains(double) else {
                    throw fail("\(path).\(field): \(double) is outside \(range.lowerBound)…\(range.upperBound)")
                }
                return double
            }
            let fill = try number(entry["fill_rate"], "fill_rate", in: 0...1)
            let revenue = try number(
                entry["revenue"]?["per_1000_requests_usd"], "revenue.per_1000_requests_usd", in: 0...1e12)
            let p95 = try number(entry["latency_ms"]?["p95"], "latency_ms.p95", in: 0...1e9)
            var placement = Placement(fillRate: fill, revenuePerMille: revenue, p95Ms: p95)
            // Optional (older reports lack them): the counts and the interval behind the changes' intervals.
            if let requests = entry["requests"]?.integer, let fills = entry["fills"]?.integer, requests > 0,
                (0...requests).contains(fills)
            {
                placement.counts = (fills, requests)
            }
            if case .array(let items)? = entry["revenue"]?["per_1000_requests_usd_ci95"] {
                let bounds = items.compactMap(\.number)
                if bounds.count == 2, items.count == 2, bounds.allSatisfy({ $0.isFinite && abs($0) <= 1e12 }),
                    bounds[0] <= bounds[1]
                {
                    placement.revenueInterval = Statistics.Interval(low: bounds[0], high: bounds[1])
                }
            }
            placements[id] = placement
        }
        return Baseline(name: name, placements: placements)
    }
}

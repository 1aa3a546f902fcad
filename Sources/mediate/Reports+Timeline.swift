import Foundation
import InMemoryTracing
import Tracing

/// `mediate load --format html`: one request as a mediation debugger shows it — the result, then a Gantt chart of its
/// spans (the mediation, each ad line and bid, each HTTP request under the line that sent it) on one time axis, then
/// the trace's table (outcome, latency, eCPM, reason per line).
extension Reports {
    /// One bar of the Gantt chart.
    struct TimelineRow: Sendable {
        var label: String
        var depth: Int
        /// Milliseconds since the request's start.
        var startMs: Double
        var endMs: Double
        var colour: String
    }

    /// What the trace's table says of one line (`network/placement`): the chart draws an ad line from it, so the
    /// chart and the table are one model (a cancelled line is `skipped` in both, with the same latency).
    struct TraceLine: Sendable {
        var outcome: String
        var latencyMs: Double?
    }

    /// The trace's lines by `network/placement` (the first of each), as the table shows them.
    static func traceLines(_ trace: [LoadReport.Line]) -> [String: TraceLine] {
        var lines: [String: TraceLine] = [:]
        for line in trace where lines[line.name] == nil {
            lines[line.name] = TraceLine(outcome: line.outcome, latencyMs: line.latencyMs)
        }
        return lines
    }

    /// The spans as rows: each span after its parent (children by start time), times relative to the earliest span.
    /// An ad line's outcome and length come from `trace` when it has the line (``traceLines(_:)``); a line of `trace`
    /// without a finished span is drawn from the trace alone, ending at the decision.
    static func timelineRows(_ spans: [FinishedInMemorySpan], trace: [String: TraceLine] = [:]) -> [TimelineRow] {
        guard let origin = spans.map(\.startInstant.nanosecondsSinceEpoch).min() else { return [] }
        let ids = Set(spans.map(\.spanID))
        var children: [String: [FinishedInMemorySpan]] = [:]
        var roots: [FinishedInMemorySpan] = []
        for span in spans {
            if let parent = span.parentSpanID, ids.contains(parent) {
                children[parent, default: []].append(span)
            } else {
                roots.append(span)
            }
        }
        func byStart(_ a: FinishedInMemorySpan, _ b: FinishedInMemorySpan) -> Bool {
            a.startInstant.nanosecondsSinceEpoch < b.startInstant.nanosecondsSinceEpoch
        }
        func ms(_ nanoseconds: UInt64) -> Double {
            nanoseconds >= origin ? Double(nanoseconds - origin) / 1e6 : 0
        }
        var rows: [TimelineRow] = []
        // Depth-first without recursion; a span is visited once even if the parent links were to form a loop.
        var stack: [(FinishedInMemorySpan, Int)] = roots.sorted(by: byStart).reversed().map { ($0, 0) }
        var seen = Set<String>()
        while let (span, depth) = stack.popLast(), rows.count < 500 {
            guard seen.insert(span.spanID).inserted else { continue }
            let line = span.operationName == "ad line" ? trace[lineKey(span)] : nil
            let (label, colour) = describe(span, line: line)
            let start = ms(span.startInstant.nanosecondsSinceEpoch)
            let end = line?.latencyMs.map { start + $0 } ?? ms(span.endInstant.nanosecondsSinceEpoch)
            rows.append(TimelineRow(label: label, depth: depth, startMs: start, endMs: max(start, end), colour: colour))
            for child in (children[span.spanID] ?? []).sorted(by: byStart).reversed() {
                stack.append((child, min(depth + 1, 8)))
            }
        }
        // A line the table has but no span drew (a cancelled load still running in the background when the page is
        // written: its span ends later): drawn from the table, ending at the decision, so the chart has every line.
        let drawn = Set(spans.filter { $0.operationName == "ad line" }.map(lineKey))
        let decision = rows.first?.endMs ?? 0
        for (key, line) in trace.sorted(by: { $0.key < $1.key }) where !drawn.contains(key) && rows.count < 500 {
            let length = line.latencyMs ?? 0
            rows.append(
                TimelineRow(
                    label: "\(key) \(line.outcome) (its load still ran after the decision)", depth: 1,
                    startMs: max(0, decision - length), endMs: max(0, decision - length) + length,
                    colour: line.outcome == "skipped" ? "#c9c9c9" : colours[3]))
        }
        return rows
    }

    /// A span's attribute as text.
    private static func text(_ span: FinishedInMemorySpan, _ key: String) -> String? {
        switch span.attributes.get(key)?.toSpanAttribute() {
        case .string(let value)?: value
        case .int64(let value)?: "\(value)"
        case .int32(let value)?: "\(value)"
        case .double(let value)?: "\(value)"
        default: nil
        }
    }

    /// An ad line span's `network/placement`, the key of ``traceLines(_:)``.
    private static func lineKey(_ span: FinishedInMemorySpan) -> String {
        "\(text(span, "admediation.network") ?? "?")/\(text(span, "admediation.line_placement") ?? "?")"
    }

    /// A span's label and colour: an ad line by its network, placement and outcome — the trace's (`line`) when it
    /// has the line — (green fill, grey no fill, light grey skipped or cancelled, red error or timeout), an HTTP
    /// request by its method and path (red for a status of 400 or more or a transport error).
    private static func describe(_ span: FinishedInMemorySpan, line: TraceLine? = nil) -> (String, String) {
        func text(_ key: String) -> String? { Self.text(span, key) }
        let failed = !span.errors.isEmpty || span.status?.code == .error
        switch span.operationName {
        case "ad line":
            let outcome = line?.outcome ?? text("admediation.outcome") ?? (failed ? "error" : "?")
            var label = "\(text("admediation.network") ?? "?")/\(text("admediation.line_placement") ?? "?") \(outcome)"
            if let code = text("admediation.code") { label += " (\(code))" }
            if let ecpm = text("admediation.ecpm") { label += " eCPM \(ecpm)" }
            let colour =
                switch outcome {
                case "fill": colours[2]
                case "no_fill": "#9a9a9a"
                case "skipped": "#c9c9c9"
                default: colours[3]
                }
            return (label, colour)
        case let name where name.hasPrefix("HTTP "):
            // The path, not the host: every request of a line goes to its network's one origin.
            var label = name
            if let path = text("url.path") { label += " \(path)" }
            if let status = text("http.response.status_code") { label += " → \(status)" }
            if let error = text("error.type") { label += " → \(error)" }
            return (label, failed ? colours[3] : "#7fa6dd")
        default:
            return (span.operationName, colours[0])
        }
    }

    /// The Gantt chart: per row, its label (indented by depth, with its start and duration) on a line of its own and
    /// its bar under it on the request's time axis.
    static func svgGantt(_ rows: [TimelineRow]) -> String {
        guard !rows.isEmpty else { return "<p class=\"timeline\">No spans were recorded for this request.</p>\n" }
        let width = 440.0, rowHeight = 34.0
        let total = max(0.001, rows.map(\.endMs).max() ?? 1)
        var svg = ""
        for (index, row) in rows.enumerated() {
            let y = Double(index) * rowHeight
            let indent = Double(row.depth) * 10
            let label = String(format: " · at %.1f ms, %.1f ms", row.startMs, row.endMs - row.startMs)
            let name = shortened(row.label, to: max(10, 66 - row.depth * 2 - label.count))
            svg += String(format: "<text x=\"%.0f\" y=\"%.0f\" font-size=\"12\">", indent + 1, y + 13)
            svg += "<title>\(escape(row.label))</title>\(escape(name + label))</text>"
            let x = width * row.startMs / total
            let barWidth = max(2, width * (row.endMs - row.startMs) / total)
            svg += String(
                format: "<rect class=\"mark\" x=\"%.1f\" y=\"%.0f\" width=\"%.1f\" height=\"12\" fill=\"%@\"/>",
                min(x, width - barWidth), y + 17, barWidth, row.colour)
        }
        let axis = Double(rows.count) * rowHeight + 12
        svg += String(format: "<text x=\"1\" y=\"%.0f\" font-size=\"11\">0 ms</text>", axis)
        svg += String(
            format: "<text x=\"%.0f\" y=\"%.0f\" font-size=\"11\" text-anchor=\"end\">%@ ms</text>", width - 2,
            axis, ms(total))
        return figure(
            title: "Timeline of the request (each line and HTTP request under the mediation)",
            label: "Request timeline", width: Int(width), height: Int(axis) + 6, svg)
    }

    /// The page of `mediate load --format html`: the result, the Gantt chart, the trace's lines and bids as a table.
    static func requestPage(_ report: LoadReport, spans: [FinishedInMemorySpan]) -> String {
        var body = "<section id=\"result\"><p data-field=\"result\">\(escape(report.result))</p></section>\n"
        body +=
            "<section id=\"timeline\"><div class=\"charts\">"
            + svgGantt(timelineRows(spans, trace: traceLines(report.trace))) + "</div></section>\n"
        func number(_ value: Double?) -> String { value.map { String(format: "%.2f", $0) } ?? "-" }
        body += "<section id=\"trace\"><h2>Lines</h2><div class=\"scroll\"><table><tr><th>line</th><th>outcome</th>"
        body += "<th>latency ms</th><th>eCPM</th><th>reason</th><th>error</th></tr>\n"
        for line in report.trace {
            let error = line.error.map { "\($0.code): \($0.message)" } ?? "-"
            body +=
                "<tr data-line=\"\(escape(line.name))\"><td>\(escape(line.name))</td><td data-field=\"outcome\">"
                + "\(escape(line.outcome))</td><td>\(escape(number(line.latencyMs)))</td>"
                + "<td>\(escape(number(line.ecpm)))</td><td>\(escape(line.reason ?? "-"))</td>"
                + "<td>\(escape(error))</td></tr>\n"
        }
        body += "</table></div>"
        if !report.bids.isEmpty {
            body += "<h2>Bids</h2><div class=\"scroll\"><table><tr><th>bidder</th><th>outcome</th><th>latency ms</th>"
            body += "<th>price</th><th>reason</th><th>auction</th></tr>\n"
            for bid in report.bids {
                body +=
                    "<tr data-bid=\"\(escape(bid.name))\"><td>\(escape(bid.name))</td>"
                    + "<td>\(escape(bid.outcome))</td><td>\(escape(number(bid.latencyMs)))</td>"
                    + "<td>\(escape(number(bid.price)))</td><td>\(escape(bid.reason ?? "-"))</td>"
                    + "<td>\(escape(bid.auctionText ?? "-"))</td></tr>\n"
            }
            body += "</table></div>"
        }
        body += "</section>\n"
        return page(title: "mediate load \(report.placement)", body: body)
    }
}

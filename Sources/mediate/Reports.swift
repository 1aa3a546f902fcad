import Foundation
import MediateKit

/// Renders comparison reports: table, JSON (stable shape, see docs/CONFIG.md), CSV, self-contained HTML.
enum ReportFormat: String, CaseIterable, Sendable {
    case table, json, csv, html
}

enum Reports {
    static func render(_ reports: [PlacementReport], as format: ReportFormat) -> String {
        switch format {
        case .table: table(reports)
        case .json: json(reports)
        case .csv: csv(reports)
        case .html: html(reports)
        }
    }

    static func jsonObject(_ reports: [PlacementReport]) -> [String: Any] {
        ["placements": reports.map { report -> [String: Any] in
            [
                "id": report.id,
                "requests": report.mediated.requests,
                "fills": report.mediated.fills,
                "fill_rate": round3(report.mediated.fillRate),
                "latency_ms": report.mediated.latencyJSON,
                "errors": report.mediated.errors,
                "lines": report.lines.enumerated().map { index, line -> [String: Any] in
                    [
                        "network": line.network,
                        "placement": line.placement,
                        "requests": line.tally.requests,
                        "fills": line.tally.fills,
                        "fill_rate": round3(line.tally.fillRate),
                        "wins": report.mediated.wins["\(index)"] ?? 0,
                        "errors": line.tally.errors,
                        "latency_ms": line.tally.latencyJSON,
                    ]
                },
            ]
        }]
    }

    static func json(_ reports: [PlacementReport]) -> String {
        let data = (try? JSONSerialization.data(withJSONObject: jsonObject(reports), options: [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }

    static func errorsText(_ errors: [String: Int]) -> String {
        errors.isEmpty ? "-" : errors.sorted { $0.key < $1.key }.map { "\($0.key):\($0.value)" }.joined(separator: " ")
    }

    static func table(_ reports: [PlacementReport]) -> String {
        var rows: [[String]] = [["placement", "source", "requests", "fill rate", "p50 ms", "p95 ms", "p99 ms", "win share", "errors"]]
        for report in reports {
            let m = report.mediated
            rows.append([report.id, "waterfall", "\(m.requests)", pct(m.fillRate), ms(m.percentileMs(50)), ms(m.percentileMs(95)), ms(m.percentileMs(99)), "-", errorsText(m.errors)])
            for (index, line) in report.lines.enumerated() {
                let t = line.tally
                let wins = report.mediated.wins["\(index)"] ?? 0
                let share = m.fills == 0 ? "0%" : pct(Double(wins) / Double(m.fills))
                rows.append(["", "\(line.network)/\(line.placement)", "\(t.requests)", pct(t.fillRate), ms(t.percentileMs(50)),
                             ms(t.percentileMs(95)), ms(t.percentileMs(99)), share, errorsText(t.errors)])
            }
        }
        let widths = rows[0].indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        return rows.map { row in
            row.enumerated().map { $0.element.padding(toLength: widths[$0.offset], withPad: " ", startingAt: 0) }.joined(separator: "  ")
        }.joined(separator: "\n")
    }

    static func csv(_ reports: [PlacementReport]) -> String {
        var lines = ["placement,source,network,network_placement,requests,fills,fill_rate,p50_ms,p95_ms,p99_ms,wins,errors"]
        for report in reports {
            let m = report.mediated
            lines.append([report.id, "waterfall", "", "", "\(m.requests)", "\(m.fills)", "\(round3(m.fillRate))", "\(round3(m.percentileMs(50)))",
                          "\(round3(m.percentileMs(95)))", "\(round3(m.percentileMs(99)))", "\(m.fills)", csvField(errorsText(m.errors))].joined(separator: ","))
            for (index, line) in report.lines.enumerated() {
                let t = line.tally
                lines.append([report.id, "network", csvField(line.network), csvField(line.placement), "\(t.requests)", "\(t.fills)", "\(round3(t.fillRate))",
                              "\(round3(t.percentileMs(50)))", "\(round3(t.percentileMs(95)))", "\(round3(t.percentileMs(99)))",
                              "\(report.mediated.wins["\(index)"] ?? 0)", csvField(errorsText(t.errors))].joined(separator: ","))
            }
        }
        return lines.joined(separator: "\n")
    }

    static func csvField(_ text: String) -> String {
        text.contains(",") || text.contains("\"") ? "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\"" : text
    }

    static func pct(_ value: Double) -> String { String(format: "%.1f%%", value * 100) }
    static func ms(_ value: Double) -> String { String(format: "%.2f", value) }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }

    /// One file, no external assets: a bar chart of fill rate and a bar chart of p50/p95/p99 per source, in SVG.
    static func html(_ reports: [PlacementReport]) -> String {
        var body = ""
        for report in reports {
            var sources: [(String, Tally, Int?)] = [("waterfall", report.mediated, nil)]
            for (index, line) in report.lines.enumerated() { sources.append(("\(line.network)/\(line.placement)", line.tally, report.mediated.wins["\(index)"] ?? 0)) }
            body += "<section><h2>\(escape(report.id))</h2>\n"
            body += svgBars(title: "Fill rate", values: sources.map { ($0.0, $0.1.fillRate * 100) }, unit: "%", maximum: 100)
            let maxLatency = max(1, sources.map { $0.1.percentileMs(99) }.max() ?? 1)
            body += svgBars(title: "Latency p50 / p95 / p99 (ms)", values: sources.flatMap { source in
                [("\(source.0) p50", source.1.percentileMs(50)), ("\(source.0) p95", source.1.percentileMs(95)), ("\(source.0) p99", source.1.percentileMs(99))]
            }, unit: " ms", maximum: maxLatency)
            body += "<table><tr><th>source</th><th>requests</th><th>fill rate</th><th>p50</th><th>p95</th><th>p99</th><th>wins</th><th>errors</th></tr>\n"
            for (name, tally, wins) in sources {
                body += "<tr><td>\(escape(name))</td><td>\(tally.requests)</td><td>\(pct(tally.fillRate))</td><td>\(ms(tally.percentileMs(50)))</td>"
                body += "<td>\(ms(tally.percentileMs(95)))</td><td>\(ms(tally.percentileMs(99)))</td><td>\(wins.map(String.init) ?? "-")</td><td>\(escape(errorsText(tally.errors)))</td></tr>\n"
            }
            body += "</table></section>\n"
        }
        return """
        <!DOCTYPE html>
        <html><head><meta charset="utf-8"><title>mediate compare</title>
        <style>body{font-family:sans-serif;margin:2em;color:#222}table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:4px 8px;text-align:right}td:first-child,th:first-child{text-align:left}svg{display:block;margin:1em 0}</style>
        </head><body><h1>mediate compare</h1>
        \(body)</body></html>
        """
    }

    static func svgBars(title: String, values: [(String, Double)], unit: String, maximum: Double) -> String {
        let rowHeight = 22, labelWidth = 260, barWidth = 400
        let height = rowHeight * values.count + 30
        var svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(labelWidth + barWidth + 90)\" height=\"\(height)\" role=\"img\" aria-label=\"\(escape(title))\">"
        svg += "<text x=\"0\" y=\"16\" font-weight=\"bold\">\(escape(title))</text>"
        for (index, (label, value)) in values.enumerated() {
            let y = 26 + index * rowHeight
            let width = maximum > 0 ? Int(Double(barWidth) * min(1, max(0, value / maximum))) : 0
            svg += "<text x=\"0\" y=\"\(y + 14)\" font-size=\"12\">\(escape(label))</text>"
            svg += "<rect x=\"\(labelWidth)\" y=\"\(y + 2)\" width=\"\(width)\" height=\"16\" fill=\"#4a7bd0\"/>"
            svg += "<text x=\"\(labelWidth + width + 6)\" y=\"\(y + 14)\" font-size=\"12\">\(String(format: "%.1f", value))\(unit)</text>"
        }
        return svg + "</svg>\n"
    }
}

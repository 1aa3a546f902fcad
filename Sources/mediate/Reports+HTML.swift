import Foundation

/// The HTML report: one self-contained, well-formed (XHTML-parsable) file with inline SVG charts and no external
/// requests. Each placement is a `<section data-placement="…">` with fill rate, revenue, latency percentiles, the
/// latency distribution (CDF), fill over time and the error breakdown, then a table whose cells carry `data-field`
/// names; the figures behind it are embedded once as JSON (`<script type="application/json" id="report-data">`), the
/// same object `--format json` prints.
extension Reports {
    /// A fixed palette; the waterfall is always the first colour.
    static let colours = ["#1f5fbf", "#d0762a", "#3b9c4b", "#b8403b", "#7d5cb5", "#8a6a4f", "#c65ba3", "#6f6f6f"]

    static func html(_ reports: [PlacementReport], partial: PartialRun? = nil, run: RunInfo? = nil) -> String {
        var body = summary(reports) + (run.map { details($0, partial: partial) } ?? "")
        for (position, report) in reports.enumerated() {
            var sources: [(name: String, tally: Tally, wins: Int?, wonRevenue: Double?)] = [
                ("waterfall", report.mediated, nil, nil)
            ]
            for (index, line) in report.lines.enumerated() {
                sources.append(
                    (
                        "\(line.network)/\(line.placement)", line.tally, report.mediated.wins["\(index)"] ?? 0,
                        report.mediated.winRevenue["\(index)"] ?? 0
                    ))
            }
            body +=
                "<section id=\"placement-\(position)\" "
                + "data-placement=\"\(escape(report.id))\"><h2>\(escape(report.id))</h2>\n"
            body += svgBars(
                title: "Fill rate", values: sources.map { ($0.name, $0.tally.fillRate * 100) }, unit: "%", maximum: 100)
            let maxRevenue = sources.map(\.tally.revenuePerMille).max() ?? 0
            body += svgBars(
                title: "Estimated revenue per 1000 requests (USD)",
                values: sources.map { ($0.name, $0.tally.revenuePerMille) },
                unit: "", maximum: maxRevenue, decimals: 4)
            let fills = report.mediated.fills
            let shares = sources.dropFirst().map { source in
                (source.name, fills == 0 ? 0 : Double(source.wins ?? 0) / Double(fills) * 100)
            }
            body += svgBars(
                title: "Win share (% of the waterfall's fills)", values: shares, unit: "%", maximum: 100,
                colour: colours[2])
            let maxLatency = max(1, sources.map { $0.tally.percentileMs(99) }.max() ?? 1)
            body += svgBars(
                title: "Latency p50 / p95 / p99 (ms)",
                values: sources.flatMap { source in
                    [
                        ("\(source.name) p50", source.tally.percentileMs(50)),
                        ("\(source.name) p95", source.tally.percentileMs(95)),
                        ("\(source.name) p99", source.tally.percentileMs(99)),
                    ]
                }, unit: " ms", maximum: maxLatency)
            body += svgCDF(sources: sources.map { ($0.name, $0.tally) })
            body += svgTimeline(report.mediated)
            // Each error bar is the share of its source's requests (5 errors in 300 requests is a short bar), with
            // the count in its label.
            let errorBars = sources.flatMap { source in
                source.tally.errors.sorted { $0.key < $1.key }.map {
                    (
                        "\(source.name) \($0.key) (\($0.value))",
                        source.tally.requests == 0 ? 0 : Double($0.value) / Double(source.tally.requests) * 100
                    )
                }
            }
            if errorBars.isEmpty {
                body += "<p class=\"errors\">No errors.</p>\n"
            } else {
                body += svgBars(
                    title: "Errors by source and code (% of the source's requests)", values: errorBars, unit: "%",
                    maximum: 100, decimals: 1, colour: colours[3])
            }
            body +=
                "<table><tr><th>source</th><th>requests</th><th>fills</th><th>fill rate</th><th>p50 ms</th><th>p95 "
                + "ms</th><th>p99 ms</th>"
            body += "<th>wins</th><th>rev/1000 req</th><th>won revenue</th><th>errors</th></tr>\n"
            for source in sources {
                let t = source.tally
                body +=
                    "<tr data-source=\"\(escape(source.name))\">" + cell("source", source.name)
                    + cell("requests", "\(t.requests)")
                body +=
                    cell("fills", "\(t.fills)") + cell("fill_rate", pct(t.fillRate))
                    + cell("p50", ms(t.percentileMs(50)))
                body +=
                    cell("p95", ms(t.percentileMs(95))) + cell("p99", ms(t.percentileMs(99)))
                    + cell("wins", source.wins.map(String.init) ?? "-")
                body +=
                    cell("revenue_per_1000", usd(t.revenuePerMille))
                    + cell("won_revenue", source.wonRevenue.map(usd) ?? "-")
                body += cell("errors", errorsText(t.errors)) + "</tr>\n"
            }
            body += "</table></section>\n"
        }
        let partialNote = partial.map { "<p class=\"partial\"><strong>\(escape($0.text))</strong></p>\n" } ?? ""
        return """
            <!DOCTYPE html>
            <html xmlns="http://www.w3.org/1999/xhtml"><head><meta charset="utf-8"/><title>mediate compare</title>
            <style>body{font-family:sans-serif;margin:2em;color:#222}table{border-collapse:collapse;margin:1em \
            0}td,th{border:1px solid #ccc;padding:4px \
            8px;text-align:right}td:first-child,th:first-child{text-align:left}svg{display:block;margin:1em 0}</style>
            </head><body><h1>mediate compare</h1>
            \(partialNote)\(body)<script type="application/json" id="report-data">\(embeddedJSON(reports))</script>
            </body></html>
            """
    }

    /// The summary first: per placement, the waterfall's fill, revenue per 1000 requests and p95, and the line
    /// whose network alone earned the most per 1000 requests.
    static func summary(_ reports: [PlacementReport]) -> String {
        var html =
            "<section id=\"summary\"><h2>Summary</h2><table><tr><th>placement</th><th>fill</th><th>rev/1000 req</th>"
            + "<th>p95 ms</th><th>best line alone</th><th>its rev/1000 req</th></tr>\n"
        for report in reports {
            let m = report.mediated
            let best = report.lines.max { $0.tally.revenuePerMille < $1.tally.revenuePerMille }
            html +=
                "<tr data-summary=\"\(escape(report.id))\">" + cell("placement", report.id)
                + cell("fill_rate", pct(m.fillRate)) + cell("revenue_per_1000", usd(m.revenuePerMille))
                + cell("p95", ms(m.percentileMs(95)))
                + cell("best_line", best.map { "\($0.network)/\($0.placement)" } ?? "-")
                + cell("best_revenue_per_1000", best.map { usd($0.tally.revenuePerMille) } ?? "-") + "</tr>\n"
        }
        return html + "</table></section>\n"
    }

    /// The run's details: when, how many requests per source, at what concurrency, against what.
    static func details(_ run: RunInfo, partial: PartialRun?) -> String {
        let date = ISO8601DateFormatter().string(from: run.date)
        var rows = [
            ("date", date), ("requests per source", "\(run.requests)"), ("concurrency", "\(run.concurrency)"),
            ("against", run.against),
            ("seed", run.seed.map { "\($0)" } ?? "none (the scenario's own)"),
        ]
        if let partial { rows.append(("partial", partial.text)) }
        return "<section id=\"run\"><h2>Run</h2><table>"
            + rows.map { "<tr><th>\(escape($0.0))</th><td data-field=\"\(escape($0.0))\">\(escape($0.1))</td></tr>" }
            .joined() + "</table></section>\n"
    }

    private static func cell(_ field: String, _ text: String) -> String {
        "<td data-field=\"\(field)\">\(escape(text))</td>"
    }

    /// The report's JSON, safe inside a script element: `<` only occurs in strings, written as `\u003c`.
    static func embeddedJSON(_ reports: [PlacementReport]) -> String {
        let data =
            (try? JSONSerialization.data(
                withJSONObject: jsonObject(reports), options: [.sortedKeys, .withoutEscapingSlashes]))
            ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self).replacingOccurrences(of: "<", with: "\\u003c")
            .replacingOccurrences(of: "&", with: "\\u0026")
    }

    static func svgBars(
        title: String, values: [(String, Double)], unit: String, maximum: Double, decimals: Int = 1,
        colour: String = colours[0]
    ) -> String {
        let rowHeight = 22, labelWidth = 300, barWidth = 400
        // A label longer than its column is shortened in the middle (its end, e.g. ` p95`, stays readable), the
        // whole name in a tooltip: it never runs under the bars.
        let labelCharacters = 46
        let height = rowHeight * values.count + 30
        var svg =
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(labelWidth + barWidth + 110)\" height=\"\(height)\" "
            + "role=\"img\" aria-label=\"\(escape(title))\">"
        svg += "<text x=\"0\" y=\"16\" font-weight=\"bold\">\(escape(title))</text>"
        for (index, (label, value)) in values.enumerated() {
            let y = 26 + index * rowHeight
            let fraction = maximum > 0 && value.isFinite ? min(1, max(0, value / maximum)) : 0
            let width = Int((Double(barWidth) * fraction).rounded())
            svg +=
                "<text x=\"0\" y=\"\(y + 14)\" font-size=\"12\"><title>\(escape(label))</title>"
                + "\(escape(shortened(label, to: labelCharacters)))</text>"
            svg += "<rect x=\"\(labelWidth)\" y=\"\(y + 2)\" width=\"\(width)\" height=\"16\" fill=\"\(colour)\"/>"
            svg +=
                "<text x=\"\(labelWidth + width + 6)\" y=\"\(y + 14)\" "
                + "font-size=\"12\">\(String(format: "%.\(decimals)f", value))\(escape(unit))</text>"
        }
        return svg + "</svg>\n"
    }

    /// The latency distribution of every source as a cumulative curve (share of requests answered within x ms), from
    /// the HdrHistogram percentiles 0…100 in steps of 2.5 (and 99, 99.9).
    static func svgCDF(sources: [(name: String, tally: Tally)]) -> String {
        let width = 640.0, height = 240.0, left = 50.0, top = 26.0, bottom = 30.0
        let plotWidth = width - left - 20, plotHeight = height - top - bottom
        let percentiles = stride(from: 0.0, through: 100.0, by: 2.5).map { $0 } + [99.0, 99.9]
        let maxMs = max(0.001, sources.map { $0.tally.percentileMs(100) }.max() ?? 1)
        var svg =
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Int(width) + 260)\" height=\"\(Int(height))\" "
            + "role=\"img\" aria-label=\"Latency distribution\">"
        svg +=
            "<text x=\"0\" y=\"16\" font-weight=\"bold\">Latency distribution (share of requests answered within x "
            + "ms)</text>"
        svg +=
            "<rect x=\"\(Int(left))\" y=\"\(Int(top))\" width=\"\(Int(plotWidth))\" height=\"\(Int(plotHeight))\" "
            + "fill=\"none\" stroke=\"#ccc\"/>"
        svg += "<text x=\"\(Int(left))\" y=\"\(Int(height) - 8)\" font-size=\"11\">0 ms</text>"
        svg +=
            "<text x=\"\(Int(left + plotWidth) - 60)\" y=\"\(Int(height) - 8)\" font-size=\"11\">\(ms(maxMs)) ms</text>"
        svg +=
            "<text x=\"4\" y=\"\(Int(top) + 10)\" font-size=\"11\">100%</text><text x=\"14\" "
            + "y=\"\(Int(top + plotHeight))\" font-size=\"11\">0%</text>"
        for (index, source) in sources.enumerated() where source.tally.requests > 0 {
            let colour = colours[index % colours.count]
            let points = percentiles.sorted().map { p -> String in
                let x = left + plotWidth * min(1, source.tally.percentileMs(p) / maxMs)
                let y = top + plotHeight * (1 - p / 100)
                return String(format: "%.1f,%.1f", x, y)
            }
            svg +=
                "<polyline fill=\"none\" stroke=\"\(colour)\" stroke-width=\"2\" "
                + "points=\"\(points.joined(separator: " "))\"/>"
            svg +=
                "<rect x=\"\(Int(width))\" y=\"\(Int(top) + index * 18)\" width=\"12\" height=\"12\" "
                + "fill=\"\(colour)\"/>"
            svg +=
                "<text x=\"\(Int(width) + 18)\" y=\"\(Int(top) + index * 18 + 11)\" "
                + "font-size=\"12\">\(escape(source.name))</text>"
        }
        return svg + "</svg>\n"
    }

    /// The waterfall's fill rate over the run, in at most 60 columns of equal length (runs of 2 s or more; a
    /// shorter run says why it has none).
    static func svgTimeline(_ tally: Tally) -> String {
        guard let last = tally.timeline.keys.max(), last >= 2 else {
            return "<p class=\"timeline\">Fill over time: the run lasted under 2 s, too short for a chart.</p>\n"
        }
        let seconds = last + 1
        let width = (seconds + 59) / 60
        var columns: [(requests: Int, fills: Int)] = Array(repeating: (0, 0), count: (seconds + width - 1) / width)
        for (second, bucket) in tally.timeline {
            let column = min(second / width, columns.count - 1)
            columns[column].requests += bucket.requests
            columns[column].fills += bucket.fills
        }
        let columnWidth = 10, plotHeight = 120, top = 26
        var svg =
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(max(560, columns.count * columnWidth + 120))\" "
            + "height=\"\(plotHeight + 56)\" role=\"img\" aria-label=\"Fill over time\">"
        svg +=
            "<text x=\"0\" y=\"16\" font-weight=\"bold\">Waterfall fill rate over time (\(width) s per column, "
            + "\(seconds) s in all)</text>"
        for (index, column) in columns.enumerated() where column.requests > 0 {
            let rate = Double(column.fills) / Double(column.requests)
            let height = Int((Double(plotHeight) * rate).rounded())
            svg +=
                "<rect x=\"\(index * columnWidth)\" y=\"\(top + plotHeight - height)\" width=\"\(columnWidth - 2)\" "
                + "height=\"\(height)\" fill=\"\(colours[0])\">"
            svg +=
                "<title>\(index * width)–\(index * width + width) s: \(pct(rate)) of \(column.requests)</title></rect>"
        }
        svg += "<text x=\"0\" y=\"\(top + plotHeight + 20)\" font-size=\"11\">0 s</text>"
        svg +=
            "<text x=\"\(max(48, columns.count * columnWidth - 30))\" y=\"\(top + plotHeight + 20)\" "
            + "font-size=\"11\">\(seconds) s</text>"
        return svg + "</svg>\n"
    }
}

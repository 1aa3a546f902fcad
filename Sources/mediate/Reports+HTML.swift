import AdMediation
import Foundation

/// The HTML report: one self-contained, well-formed (XHTML-parsable) file with inline SVG charts and no external
/// requests. Each placement is a `<section data-placement="…">` with fill rate, revenue, latency percentiles, the
/// latency distribution (CDF), fill over time and the error breakdown, then a table whose cells carry `data-field`
/// names; the figures behind it are embedded once as JSON (`<script type="application/json" id="report-data">`), the
/// same object `--format json` prints.
extension Reports {
    /// A fixed palette; the waterfall is always the first colour.
    static let colours = ["#1f5fbf", "#d0762a", "#3b9c4b", "#b8403b", "#7d5cb5", "#8a6a4f", "#c65ba3", "#6f6f6f"]

    static func html(
        _ reports: [PlacementReport], partial: PartialRun? = nil, run: RunInfo? = nil, baseline: Baseline? = nil
    ) -> String {
        var body = summary(reports, baseline: baseline) + (run.map { details($0, partial: partial) } ?? "")
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
            // Why a source did not fill: requests the privacy rules blocked, with the rule and the signal.
            for source in sources {
                for hint in PrivacyHint.of(source.tally) {
                    body +=
                        "<p class=\"not-sent\" data-field=\"privacy_blocked\" data-source=\"\(escape(source.name))\">"
                        + "<strong>\(escape(source.name))</strong>: "
                        + "\(escape(hint.text(of: source.tally.requests, given: run?.privacy ?? [])))</p>\n"
                }
            }
            body += "<div class=\"charts\">\n"
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
            body += svgTimeline(report.mediated, duration: run?.duration)
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
                "</div><div class=\"scroll\"><table><tr><th>source</th><th>requests</th><th>fills</th>"
                + "<th>fill rate</th><th>p50 ms</th><th>p95 ms</th><th>p99 ms</th>"
            // A line's fills are its network's alone; its wins are the waterfall's requests it won (another run).
            body +=
                "<th title=\"\(escape(winsMeaning))\">wins in the waterfall</th><th>rev/1000 req</th>"
                + "<th>won revenue</th><th>errors</th></tr>\n"
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
                    cell("revenue_per_1000", revenueText(t))
                    + cell("won_revenue", source.wonRevenue.map(usd) ?? "-")
                body += cell("errors", errorShares(t.errors, requests: t.requests)) + "</tr>\n"
            }
            body += "</table></div>"
            // Said under every table: a line's wins may exceed its fills, and that is no miscount.
            body += "<p class=\"note\" data-field=\"wins_meaning\">\(escape(winsMeaning))</p></section>\n"
        }
        let partialNote = partial.map { "<p class=\"partial\"><strong>\(escape($0.text))</strong></p>\n" } ?? ""
        return page(
            title: "mediate compare",
            body: partialNote + body
                + "<script type=\"application/json\" id=\"report-data\">"
                + "\(embeddedJSON(reports, given: run?.privacy ?? []))</script>\n")
    }

    /// What a line's `fills` and `wins in the waterfall` count, stated under each table: two runs, so a line may
    /// show more wins than fills.
    static let winsMeaning =
        "A line's fills are its network's, asked alone in requests of its own; its wins in the waterfall are the "
        + "waterfall's requests it won, a separate run of the same number of requests. The two runs are not bounded "
        + "by each other: a line may win more requests in the waterfall than it filled alone."

    /// The page around a report's body: the one style sheet (charts in a grid of 440 px columns, each chart scaled
    /// down to the width it is given; tables in boxes that scroll sideways on a narrow screen), no external asset.
    static func page(title: String, body: String) -> String {
        """
        <!DOCTYPE html>
        <html xmlns="http://www.w3.org/1999/xhtml" lang="en"><head><meta charset="utf-8"/>\
        <meta name="viewport" content="width=device-width, initial-scale=1"/><title>\(escape(title))</title>
        <style>
        body{font-family:sans-serif;margin:2em;color:#222;line-height:1.35}
        h1,h2,p,figcaption{overflow-wrap:anywhere}
        table{border-collapse:collapse;margin:0}
        td,th{border:1px solid #ccc;padding:4px 8px;text-align:right;white-space:nowrap}
        td:first-child,th:first-child{text-align:left}
        .scroll{overflow-x:auto;margin:1em 0;max-width:100%}
        #run td{white-space:normal;overflow-wrap:anywhere;text-align:left}
        .charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(100%,440px),1fr));gap:1em 2.5em}
        figure{margin:0;min-width:0}
        figcaption{font-weight:bold;margin:0.5em 0}
        svg{display:block;width:100%;max-width:440px;height:auto}
        svg text{font-family:sans-serif}
        .better{color:#1a7f37}.worse{color:#b8403b}.same{color:#6f6f6f}
        td[data-field=errors],td[data-field=source],td[data-field=best_source],td[data-field=best_line]\
        {white-space:normal;overflow-wrap:anywhere;min-width:8em}
        .not-sent{background:#fff4e5;border-left:4px solid #d0762a;padding:0.4em 0.8em}
        .note{color:#555;font-size:0.9em;max-width:60em}
        @media (max-width:600px){body{margin:1em}}
        </style>
        </head><body><h1>\(escape(title))</h1>
        \(body)</body></html>
        """
    }

    /// Revenue per 1000 requests, or `—` for a source that filled without any price (every fill's precision
    /// `undefined`: unpriced, not $0).
    static func revenueText(_ tally: Tally) -> String {
        let unpriced = tally.precisions.keys.allSatisfy { $0 == RevenuePrecision.undefined.rawValue }
        return tally.fills > 0 && unpriced ? "—" : usd(tally.revenuePerMille)
    }

    /// `server_500: 20 (66.7%)`: each error code's count and its share of the source's requests.
    static func errorShares(_ errors: [String: Int], requests: Int) -> String {
        guard !errors.isEmpty else { return "-" }
        return errors.sorted { $0.key < $1.key }.map { code, count in
            let share = requests == 0 ? 0 : Double(count) / Double(requests)
            return "\(code): \(count) (\(pct(share)))"
        }.joined(separator: " ")
    }

    /// A chart: its title as the figure's caption (HTML, so a long title wraps instead of being cut) and an SVG
    /// whose `viewBox` is `width` × `height`, scaled to the column it is given.
    /// `label`: the chart's short name (`aria-label`), the title when nil.
    static func figure(title: String, label: String? = nil, width: Int, height: Int, _ content: String) -> String {
        "<figure><figcaption>\(escape(title))</figcaption><svg xmlns=\"http://www.w3.org/2000/svg\" "
            + "viewBox=\"0 0 \(width) \(height)\" width=\"\(width)\" height=\"\(height)\" role=\"img\" "
            + "aria-label=\"\(escape(label ?? title))\">\(content)</svg></figure>\n"
    }

    /// The best source of a placement, named only when the difference is significant: the line whose network alone
    /// earned the most per 1000 requests against the waterfall, with the 95 % interval of the difference (normal
    /// approximation, unpooled variances, as `--arms` computes it). The waterfall when there is no line.
    static func bestSource(_ report: PlacementReport) -> String {
        let m = report.mediated
        guard let best = report.lines.max(by: { $0.tally.revenuePerMille < $1.tally.revenuePerMille }) else {
            return "waterfall"
        }
        let name = "\(best.network)/\(best.placement)"
        let figures = "\(name) \(revenueText(best.tally)) vs waterfall \(revenueText(m)) per 1000 requests"
        guard
            let interval = Statistics.meanDifference(
                (m.requests, m.revenue, m.revenueSquares),
                (best.tally.requests, best.tally.revenue, best.tally.revenueSquares), scale: 1000)
        else { return "waterfall" }
        let difference = change(usd: best.tally.revenuePerMille - m.revenuePerMille)
        let ci = "CI \(change(usd: interval.low))…\(change(usd: interval.high))"
        if interval.containsZero {
            return "none significant (\(figures): \(difference), \(ci))"
        }
        return "\(interval.low > 0 ? name : "waterfall") (\(figures): \(difference), \(ci))"
    }

    /// The summary first: per placement, the waterfall's fill, revenue per 1000 requests and p95 (each with its
    /// change since `baseline` when given, and the change's 95 % interval where the baseline has the counts), the best
    /// source (``bestSource(_:)``: named only on a significant difference, with its numbers), and the line whose
    /// network alone earned the most.
    static func summary(_ reports: [PlacementReport], baseline: Baseline? = nil) -> String {
        var html = "<section id=\"summary\"><h2>Summary</h2>"
        if let baseline { html += "<p>Changes are against the baseline \(escape(baseline.name)).</p>" }
        html +=
            "<div class=\"scroll\"><table><tr><th>placement</th><th>best source</th><th>fill</th><th>rev/1000 req</th>"
            + "<th>p95 ms</th><th>best line alone</th><th>its rev/1000 req</th></tr>\n"
        for report in reports {
            let m = report.mediated
            let best = report.lines.max { $0.tally.revenuePerMille < $1.tally.revenuePerMille }
            let before = baseline?.placements[report.id]
            let fillInterval = before.flatMap { old in
                old.counts.flatMap { Statistics.proportionDifference($0, (m.fills, m.requests)) }
            }
            let revenueInterval = before.flatMap { old in
                old.revenueInterval.flatMap { revenueChangeInterval(old: $0, m) }
            }
            html +=
                "<tr data-summary=\"\(escape(report.id))\">" + cell("placement", report.id)
                + cell("best_source", bestSource(report))
                + changeCell(
                    "fill_rate", pct(m.fillRate), before.map { change(points: m.fillRate - $0.fillRate) },
                    better: before.map { m.fillRate >= $0.fillRate }, missing: baseline != nil,
                    interval: fillInterval.map { "CI \(change(points: $0.low))…\(change(points: $0.high))" },
                    significant: fillInterval.map { !$0.containsZero })
                + changeCell(
                    "revenue_per_1000", revenueText(m),
                    before.map { change(usd: m.revenuePerMille - $0.revenuePerMille) },
                    better: before.map { m.revenuePerMille >= $0.revenuePerMille }, missing: baseline != nil,
                    interval: revenueInterval.map { "CI \(change(usd: $0.low))…\(change(usd: $0.high))" },
                    significant: revenueInterval.map { !$0.containsZero })
                + changeCell(
                    "p95", ms(m.percentileMs(95)), before.map { change(ms: m.percentileMs(95) - $0.p95Ms) },
                    better: before.map { m.percentileMs(95) <= $0.p95Ms }, missing: baseline != nil)
                + cell("best_line", best.map { "\($0.network)/\($0.placement)" } ?? "-")
                + cell("best_revenue_per_1000", best.map { revenueText($0.tally) } ?? "-") + "</tr>\n"
        }
        return html + "</table></div></section>\n"
    }

    /// The 95 % interval of the change of revenue per 1000 requests since a baseline whose own interval is `old`: the
    /// baseline's standard error read back from its interval's half-width, the new one from the run's requests.
    static func revenueChangeInterval(old: Statistics.Interval, _ tally: Tally) -> Statistics.Interval? {
        guard
            let new = Statistics.meanInterval(
                count: tally.requests, sum: tally.revenue, squares: tally.revenueSquares, scale: 1000)
        else { return nil }
        let oldHalf = (old.high - old.low) / 2
        let newHalf = (new.high - new.low) / 2
        let half = (oldHalf * oldHalf + newHalf * newHalf).squareRoot()
        let difference = (new.low + new.high) / 2 - (old.low + old.high) / 2
        return Statistics.Interval(low: difference - half, high: difference + half)
    }

    /// A summary cell: the value, then (with a baseline) its change on a second line, green when better, red when
    /// worse, `new` when the baseline has no such placement. With the change's 95 % `interval`, the interval follows
    /// it, and a change that is not `significant` (its interval holds 0) is grey and says so.
    private static func changeCell(
        _ field: String, _ value: String, _ change: String?, better: Bool?, missing: Bool, interval: String? = nil,
        significant: Bool? = nil
    ) -> String {
        var html = "<td data-field=\"\(field)\">\(escape(value))"
        if let change, let better {
            let style = significant == false ? "same" : better ? "better" : "worse"
            html +=
                "<br/><small class=\"\(style)\" data-field=\"\(field)_change\">"
                + "\(escape(change))</small>"
            if let interval {
                html +=
                    "<br/><small class=\"\(style)\" data-field=\"\(field)_change_ci\">\(escape(interval))"
                    + (significant == false ? ", not significant" : "") + "</small>"
            }
        } else if missing {
            html += "<br/><small data-field=\"\(field)_change\">new</small>"
        }
        return html + "</td>"
    }

    /// `+3.3 pts` (a change of a rate in percentage points).
    static func change(points: Double) -> String { String(format: "%+.1f pts", points * 100) }
    /// `-$0.0123`.
    static func change(usd value: Double) -> String {
        (value < 0 ? "-" : "+") + String(format: "$%.4f", abs(value))
    }
    /// `+1.20 ms`.
    static func change(ms value: Double) -> String { String(format: "%+.2f ms", value) }

    /// The run's details: the tool's version, when, how long, how many requests per source, at what concurrency,
    /// against what, with which seed and baseline, which placements.
    static func details(_ run: RunInfo, partial: PartialRun?) -> String {
        let date = ISO8601DateFormatter().string(from: run.date)
        var rows = [
            ("mediate", MediateVersion.current), ("date", date),
            ("duration", run.duration.map { String(format: "%.1f s", $0) } ?? "-"),
            ("requests per source", "\(run.requests)"), ("concurrency", "\(run.concurrency)"),
            ("against", run.against),
            ("placements", run.placements.isEmpty ? "-" : run.placements.joined(separator: ", ")),
            ("seed", run.seed.map { "\($0)" } ?? "none (the scenario's own)"),
            ("baseline", run.baseline ?? "none"),
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
    static func embeddedJSON(_ reports: [PlacementReport], given: [String] = []) -> String {
        let data = ReportJSON.data(CompareReport(reports, given: given), compact: true) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self).replacingOccurrences(of: "<", with: "\\u003c")
            .replacingOccurrences(of: "&", with: "\\u0026")
    }

}

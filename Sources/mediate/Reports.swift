import ArgumentParser
import Foundation
import MediateKit

/// Renders comparison reports: table, JSON (stable shape, see docs/CONFIG.md), CSV, self-contained HTML.
/// `--format`: argument-parser lists the values in `--help` and refuses any other.
enum ReportFormat: String, CaseIterable, Sendable, ExpressibleByArgument {
    case table, json, csv, html

    /// The format a file name's extension names (`.html`/`.htm`, `.json`, `.csv`, any case); nil for any other.
    init?(extensionOf path: String) {
        switch URL(fileURLWithPath: path).pathExtension.lowercased() {
        case "html", "htm": self = .html
        case "json": self = .json
        case "csv": self = .csv
        default: return nil
        }
    }
}

/// A run stopped early (Ctrl-C): how many requests ran of how many planned.
struct PartialRun: Encodable, Sendable {
    var done: Int
    var planned: Int

    enum CodingKeys: String, CodingKey {
        case done = "requests_done"
        case planned = "requests_planned"
    }

    /// `partial: interrupted after 1 234 of 20 000 requests`.
    var text: String {
        "partial: interrupted after \(ProgressCounter.grouped(done)) of \(ProgressCounter.grouped(planned)) requests"
    }
}

/// What the HTML report says about the run itself.
struct RunInfo: Sendable {
    var date: Date
    var requests: Int
    var concurrency: Int
    /// `--config`'s path, or the demo's name.
    var against: String
    /// `--seed`, when given.
    var seed: UInt64? = nil
    /// How long the run took, in seconds.
    var duration: Double? = nil
    /// The placements compared.
    var placements: [String] = []
    /// `--baseline`'s path, when given.
    var baseline: String? = nil
    /// The privacy options given (`--gdpr 1`), named in the `privacy_blocked` hints.
    var privacy: [String] = []
}

enum Reports {
    /// The report; a partial run is marked: a first line of the table, `"partial": {"requests_done",
    /// "requests_planned"}` in JSON, a note at the top of the HTML (CSV keeps its shape; stderr says it).
    /// `wide`: the table with every column (p99, error codes) on one row per source, however wide; otherwise the
    /// compact table that fits ``compactWidth`` columns.
    static func render(
        _ reports: [PlacementReport], as format: ReportFormat, partial: PartialRun? = nil, wide: Bool = false,
        run: RunInfo? = nil, baseline: Baseline? = nil
    ) -> String {
        switch format {
        case .table:
            (partial.map { $0.text + "\n" } ?? "")
                + (wide ? table(CompareReport(reports)) : compactTable(CompareReport(reports)))
                + winsNote(reports)
                + notSent(reports, given: run?.privacy ?? [])
                + (baseline.map { "\n" + changes(reports, since: $0) } ?? "")
        case .json: json(reports, partial: partial, given: run?.privacy ?? [])
        case .csv: csv(CompareReport(reports))
        case .html: html(reports, partial: partial, run: run, baseline: baseline)
        }
    }

    /// Under the table, one line per placement: what changed since `--baseline` (the waterfall's fill in points,
    /// revenue per 1000 requests, p95), each line within ``compactWidth`` columns.
    static func changes(_ reports: [PlacementReport], since baseline: Baseline) -> String {
        var lines = [shortened("changes since the baseline \(baseline.name):", to: compactWidth)]
        for report in reports {
            let m = report.mediated
            guard let before = baseline.placements[report.id] else {
                lines.append(shortened("  \(report.id): not in the baseline", to: compactWidth))
                continue
            }
            lines.append(
                shortened(
                    "  \(report.id): fill \(change(points: m.fillRate - before.fillRate)), rev/1000 "
                        + "\(change(usd: m.revenuePerMille - before.revenuePerMille)), p95 "
                        + change(ms: m.percentileMs(95) - before.p95Ms), to: compactWidth))
        }
        return lines.map(TerminalText.escaped).joined(separator: "\n")
    }

    /// Under the table when a placement has lines: a line's fill and its win share come from two runs (its network
    /// asked alone; the waterfall), so a line can win more requests than it filled alone (issue 47), wrapped within
    /// ``compactWidth`` columns.
    static func winsNote(_ reports: [PlacementReport]) -> String {
        guard reports.contains(where: { !$0.lines.isEmpty }) else { return "" }
        return "\n" + wrapped(winsNoteText, width: compactWidth, indent: "  ").joined(separator: "\n")
    }

    /// The note's text.
    static let winsNoteText =
        "note: a line's fill is its network's, asked alone in requests of its own; its win is its share of the "
        + "waterfall's fills, in the waterfall's separate run: a line can win more requests than it filled alone."

    /// Under the table, per source whose requests the privacy rules blocked: how many were not sent, the reason, the
    /// rule's row and the signal it reads (why a waterfall's fill is 0 %), wrapped within ``compactWidth`` columns.
    /// Empty when nothing was blocked.
    static func notSent(_ reports: [PlacementReport], given: [String]) -> String {
        var lines: [String] = []
        for report in reports {
            let sources =
                [("waterfall", report.mediated)] + report.lines.map { ("\($0.network)/\($0.placement)", $0.tally) }
            for (name, tally) in sources {
                for hint in PrivacyHint.of(tally) {
                    let text = "\(report.id) \(name): " + hint.text(of: tally.requests, given: given)
                    lines += wrapped(TerminalText.escaped(text), width: compactWidth, indent: "    ")
                }
            }
        }
        return lines.isEmpty ? "" : "\nnot sent (the privacy rules blocked them):\n" + lines.joined(separator: "\n")
    }

    /// The JSON report (`--format json`): ``CompareReport``, indented.
    static func json(_ reports: [PlacementReport], partial: PartialRun? = nil, given: [String] = []) -> String {
        ReportJSON.text(CompareReport(reports, partial: partial, given: given))
    }

    static func errorsText(_ errors: [String: Int]) -> String {
        errors.isEmpty ? "-" : errors.sorted { $0.key < $1.key }.map { "\($0.key):\($0.value)" }.joined(separator: " ")
    }

    /// The wide table (`--wide`): one row per source with every column.
    static func table(_ report: CompareReport) -> String {
        var rows: [[String]] = [
            [
                "placement", "source", "requests", "fill rate", "p50 ms", "p95 ms", "p99 ms", "win share",
                "rev/1000 req", "errors",
            ]
        ]
        for m in report.placements {
            rows.append([
                m.id, "waterfall", "\(m.requests)", pct(m.fillRate), ms(m.latency.p50), ms(m.latency.p95),
                ms(m.latency.p99), "-", usd(m.revenue.perMilleUSD), errorsText(m.errors),
            ])
            for (label, arm) in m.abLabels.sorted(by: { $0.key < $1.key }) where m.abLabels.count > 1 {
                rows.append([
                    "", "  arm \(label)", "\(arm.requests)", pct(arm.fillRate), "-", "-", "-", "-",
                    usd(arm.revenuePerMille), "-",
                ])
            }
            for line in m.lines {
                let share = m.fills == 0 ? "0%" : pct(Double(line.wins) / Double(m.fills))
                rows.append([
                    "", line.name, "\(line.requests)", pct(line.fillRate), ms(line.latency.p50), ms(line.latency.p95),
                    ms(line.latency.p99), share, usd(line.revenue.perMilleUSD), errorsText(line.errors),
                ])
            }
        }
        // Names and error codes may come from outside: escaped before the widths are measured.
        rows = rows.map { $0.map(TerminalText.escaped) }
        let widths = rows[0].indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        return rows.map { row in
            row.enumerated().map { $0.element.padding(toLength: widths[$0.offset], withPad: " ", startingAt: 0) }
                .joined(separator: "  ")
        }.joined(separator: "\n")
    }

    /// The compact table's width: an 80-column terminal.
    static let compactWidth = 80

    /// The table in at most ``compactWidth`` columns: a heading line per placement, then one row per source (the
    /// waterfall, its A/B arms, each line's network alone) with requests, fill, p50/p95, win share, revenue per 1000
    /// requests and the error count; a source's error codes follow on a line of their own. Source names too long for
    /// the space left are shortened in the middle (`appopen/ca-app-…/5575463023`). `--wide` shows p99 too. The
    /// columns: `req` requests, `fill` fill rate, `win` the line's share of the waterfall's fills, `rev/1000`
    /// estimated revenue per 1000 requests, `err` errors.
    static func compactTable(_ report: CompareReport) -> String {
        let header = ["source", "req", "fill", "p50 ms", "p95 ms", "win", "rev/1000", "err"]
        var blocks: [(id: String, rows: [[String]], errors: [String])] = []
        for m in report.placements {
            var rows: [[String]] = []
            var errors: [String] = []
            func errorCount(_ errors: [String: Int]) -> String { "\(errors.values.reduce(0, +))" }
            rows.append([
                "waterfall", "\(m.requests)", pct(m.fillRate), ms(m.latency.p50), ms(m.latency.p95), "-",
                usd(m.revenue.perMilleUSD), errorCount(m.errors),
            ])
            if !m.errors.isEmpty { errors.append("waterfall: \(errorsText(m.errors))") }
            for (label, arm) in m.abLabels.sorted(by: { $0.key < $1.key }) where m.abLabels.count > 1 {
                let rpm = usd(arm.revenuePerMille)
                rows.append(["  arm \(label)", "\(arm.requests)", pct(arm.fillRate), "-", "-", "-", rpm, "-"])
            }
            for line in m.lines {
                let share = m.fills == 0 ? "0%" : pct(Double(line.wins) / Double(m.fills))
                rows.append([
                    line.name, "\(line.requests)", pct(line.fillRate), ms(line.latency.p50), ms(line.latency.p95),
                    share, usd(line.revenue.perMilleUSD), errorCount(line.errors),
                ])
                if !line.errors.isEmpty { errors.append("\(line.name): \(errorsText(line.errors))") }
            }
            // Names and error codes may come from outside: escaped before the widths are measured.
            blocks.append(
                (
                    TerminalText.escaped(m.id), rows.map { $0.map(TerminalText.escaped) },
                    errors.map(TerminalText.escaped)
                ))
        }
        let all = [header] + blocks.flatMap(\.rows)
        let indent = "  "
        let gap = "  "
        // Every column but the source as wide as its widest cell; the source gets what is left of the width.
        let numberWidths = (1..<header.count).map { column in all.map { $0[column].count }.max() ?? 0 }
        let fixed = indent.count + numberWidths.reduce(0, +) + gap.count * numberWidths.count
        let sourceWidth = max(12, min(all.map { $0[0].count }.max() ?? 0, compactWidth - fixed))
        func render(_ row: [String]) -> String {
            let source = shortened(row[0], to: sourceWidth)
            var text = indent + source.padding(toLength: sourceWidth, withPad: " ", startingAt: 0)
            for (offset, cell) in row.dropFirst().enumerated() {
                text += gap + String(repeating: " ", count: max(0, numberWidths[offset] - cell.count)) + cell
            }
            return text
        }
        var lines = [render(header)]
        for block in blocks {
            lines.append(shortened(block.id, to: compactWidth))
            lines += block.rows.map(render)
            lines += block.errors.map { shortened(indent + "errors of " + $0, to: compactWidth) }
        }
        return lines.joined(separator: "\n")
    }

    /// `text` in at most `width` characters: the middle replaced by `…` when it is longer.
    static func shortened(_ text: String, to width: Int) -> String {
        guard text.count > width, width > 1 else { return text }
        let head = (width - 1) / 2
        let tail = width - 1 - head
        return String(text.prefix(head)) + "…" + String(text.suffix(tail))
    }

    /// The CSV: a header, then per placement its waterfall's row and one row per line's network alone. The two counts
    /// of a row come from two runs, as their columns say: `fills_in_own_run` (the waterfall's, or the line's network
    /// asked alone) and `wins_in_waterfall_run` (the waterfall requests the source won), so a line's wins can exceed
    /// its fills.
    static func csv(_ report: CompareReport) -> String {
        var lines = [
            ("placement,source,network,network_placement,requests,fills_in_own_run,fill_rate,"
                + "p50_ms,p95_ms,p99_ms,wins_in_waterfall_run,errors,revenue_per_1000_requests_usd")
        ]
        for m in report.placements {
            lines.append(
                [
                    m.id, "waterfall", "", "", "\(m.requests)", "\(m.fills)", "\(round3(m.fillRate))",
                    "\(round3(m.latency.p50))", "\(round3(m.latency.p95))", "\(round3(m.latency.p99))", "\(m.fills)",
                    csvField(errorsText(m.errors)), "\(round6(m.revenue.perMilleUSD))",
                ].joined(separator: ","))
            for line in m.lines {
                lines.append(
                    [
                        m.id, "network", csvField(line.network), csvField(line.placement), "\(line.requests)",
                        "\(line.fills)", "\(round3(line.fillRate))", "\(round3(line.latency.p50))",
                        "\(round3(line.latency.p95))", "\(round3(line.latency.p99))", "\(line.wins)",
                        csvField(errorsText(line.errors)), "\(round6(line.revenue.perMilleUSD))",
                    ].joined(separator: ","))
            }
        }
        return lines.joined(separator: "\n")
    }

    static func csvField(_ text: String) -> String {
        text.contains(",") || text.contains("\"")
            ? "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\"" : text
    }

    static func round6(_ value: Double) -> Double { (value * 1_000_000).rounded() / 1_000_000 }
    static func pct(_ value: Double) -> String { String(format: "%.1f%%", value * 100) }
    static func ms(_ value: Double) -> String { String(format: "%.2f", value) }
    static func usd(_ value: Double) -> String { String(format: "$%.4f", value) }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}

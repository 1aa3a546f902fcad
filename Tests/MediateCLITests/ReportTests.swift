import Foundation
import Testing

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// The HTML pages' shape an XML parser can check (the rendering itself is checked in Chromium by
/// `make report-check`), `--baseline`, and `mediate load --format html`.
@Suite("mediate reports: baseline, request timeline, page shape", .serialized, .timeLimit(.minutes(3)))
struct ReportTests {
    /// Every element of a well-formed page, in document order: name and attributes.
    final class Elements: NSObject, XMLParserDelegate {
        var list: [(name: String, attributes: [String: String])] = []
        var text: [String] = []

        func parser(
            _ parser: XMLParser, didStartElement element: String, namespaceURI: String?, qualifiedName: String?,
            attributes: [String: String] = [:]
        ) { list.append((element, attributes)) }

        func parser(_ parser: XMLParser, foundCharacters string: String) { text.append(string) }

        static func read(_ page: String) throws -> Elements {
            let elements = Elements()
            let parser = XMLParser(data: Data(page.utf8))
            parser.delegate = elements
            #expect(parser.parse(), "well-formed: \(String(describing: parser.parserError))")
            return elements
        }
    }

    static func temporary(_ suffix: String) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("report-\(UUID().uuidString).\(suffix)").path
    }

    /// A JSON report of `fill_rate`, revenue and p95 for one placement, as `--format json` writes it.
    static func baselineJSON(id: String, fill: Double, revenue: Double, p95: Double) -> String {
        """
        {"placements": [{"id": "\(id)", "requests": 10, "fills": 1, "fill_rate": \(fill), \
        "latency_ms": {"p50": 1, "p95": \(p95), "p99": 9}, "revenue": {"per_1000_requests_usd": \(revenue)}}]}
        """
    }

    @Test("the page scales to a phone: a viewport, each chart a figure with a viewBox, tables in scroll boxes")
    func thePageIsBuiltToScale() async throws {
        let path = Self.temporary("html")
        let run = try await mediate([
            "compare", "--placement", "main_banner", "--requests", "6", "--format", "html", "--output", path, "--quiet",
        ])
        #expect(run.code == 0, "stderr: \(run.err)")
        let page = try Elements.read(try String(contentsOfFile: path, encoding: .utf8))
        #expect(page.list.contains { $0.name == "meta" && $0.attributes["name"] == "viewport" })
        let charts = page.list.filter { $0.name == "svg" }
        #expect(!charts.isEmpty)
        for chart in charts {
            #expect(chart.attributes["viewBox"]?.hasPrefix("0 0 ") == true, "\(chart.attributes)")
        }
        #expect(page.list.filter { $0.name == "figure" }.count == charts.count, "each chart in a figure")
        #expect(page.list.filter { $0.name == "figcaption" }.count == charts.count, "its title as HTML text")
        #expect(page.list.filter { $0.name == "table" }.count <= page.list.filter { $0.name == "div" }.count)
    }

    @Test("--baseline: the summary shows each placement's change in fill, revenue and p95 since the old run")
    func theSummaryShowsTheChangeSinceTheBaseline() async throws {
        let old = try writeConfig(Self.baselineJSON(id: "main_banner", fill: 0.25, revenue: 0.5, p95: 1000))
        let htmlPath = Self.temporary("html")
        let run = try await mediate([
            "compare", "--placement", "main_banner", "--requests", "8", "--baseline", old, "--format", "html",
            "--output", htmlPath, "--quiet",
        ])
        #expect(run.code == 0, "stderr: \(run.err)")
        let html = try String(contentsOfFile: htmlPath, encoding: .utf8)
        // The new figures: the report's own embedded JSON (the same object --format json prints).
        let embedded = try #require(html.firstMatch(of: #/id="report-data">(.*)</script>/#)?.1)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(embedded.utf8)) as? [String: Any])
        let placement = try #require((json["placements"] as? [[String: Any]])?.first)
        let fill = try #require(placement["fill_rate"] as? Double)
        let points = String(format: "%+.1f pts", (fill - 0.25) * 100)
        #expect(html.contains(#"data-field="fill_rate_change">\#(points)</small>"#), "fill \(fill) vs 25 %")
        let revenue = try #require((placement["revenue"] as? [String: Any])?["per_1000_requests_usd"] as? Double)
        // Shown to 4 decimals: compared within half a unit of the last (a difference ending in 5 may round either way).
        let pattern = #/data-field="revenue_per_1000_change">([+-])\$([0-9.]+)</small>/#
        let shown = try #require(html.firstMatch(of: pattern))
        let change = (shown.1 == "-" ? -1 : 1) * (Double(shown.2) ?? .nan)
        #expect(abs(change - (revenue - 0.5)) <= 0.000_051, "\(shown.0): \(revenue) vs 0.5")
        let p95 = try #require((placement["latency_ms"] as? [String: Double])?["p95"])
        #expect(p95 < 1000)
        #expect(html.contains(#"<small class="better" data-field="p95_change">-"#), "p95 fell from 1 s: better")
        #expect(html.contains(#"<td data-field="baseline">\#(old)</td>"#), "the run details name the baseline")
    }

    @Test("--baseline: the table ends with one line per placement saying what changed")
    func theTableSaysWhatChanged() async throws {
        let old = try writeConfig(Self.baselineJSON(id: "main_banner", fill: 1, revenue: 0, p95: 0))
        let run = try await mediate([
            "compare", "--placement", "main_banner", "--requests", "4", "--baseline", old, "--quiet",
        ])
        #expect(run.code == 0, "stderr: \(run.err)")
        let lines = run.out.split(separator: "\n").map(String.init)
        let heading = try #require(lines.firstIndex { $0.hasPrefix("changes since the baseline") }, "\(run.out)")
        let line = try #require(lines.dropFirst(heading + 1).first)
        // From a baseline of 100 % fill, no revenue and a p95 of 0: fill can only fall or stay, the rest only rise.
        #expect(
            line.wholeMatch(
                of: #/  main_banner: fill (-\d+\.\d|\+0\.0) pts, rev/1000 \+\$\d+\.\d{4}, p95 \+\d+\.\d\d ms/#)
                != nil, "\(line)")
    }

    @Test("--baseline with a file that is not a JSON report exits 2 naming the file and the field")
    func aWrongBaselineIsNamed() async throws {
        let notAReport = try writeConfig(#"{"placements": [{"id": "main_banner", "fill_rate": "high"}]}"#)
        let run = try await mediate(["compare", "--placement", "main_banner", "--baseline", notAReport, "--quiet"])
        #expect(run.code == 2)
        #expect(run.err.contains("--baseline \(notAReport): placements[0].fill_rate: not a number"), "\(run.err)")
        #expect(run.err.contains("mediate compare --format json"), "says what the file should be")
        #expect(run.out.isEmpty, "nothing ran")

        let missing = try await mediate(["compare", "--baseline", "/nonexistent/old.json", "--quiet"])
        #expect(missing.code == 2)
        #expect(missing.err.contains("--baseline: cannot read /nonexistent/old.json"), "\(missing.err)")
    }

    @Test("load --format html draws the request's timeline: the mediation, then each line with its HTTP request")
    func loadDrawsTheRequestsTimeline() async throws {
        let run = try await mediate(["load", "--placement", "main_banner", "--format", "html"])
        #expect(run.code == 0, "stderr: \(run.err)")
        let page = try Elements.read(run.out)
        let chart = try #require(page.list.first { $0.name == "svg" })
        #expect(chart.attributes["aria-label"] == "Request timeline")
        let text = page.text.joined()
        // The demo's main_banner waterfall: two Chartboost lines, each sending one POST.
        #expect(text.contains("mediation · at 0.0 ms"), "the root span first, at 0")
        #expect(text.contains("chartboost/Main Menu"), "\(text)")
        #expect(text.contains("HTTP POST /chartboost/"), "the line's HTTP request under it")
        let bars = page.list.filter { $0.name == "rect" && $0.attributes["class"] == "mark" }
        #expect(bars.count >= 3, "a bar per span: \(bars.count)")
        #expect(!run.out.contains("<script src") && !run.out.contains("<link"), "self-contained")
    }
}

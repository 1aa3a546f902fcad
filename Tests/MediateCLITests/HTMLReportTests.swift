import Foundation
import Testing

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// What the HTML report holds, read with an XML parser: sections by placement, table cells by source and field, the
/// SVG charts' titles, and the embedded JSON.
final class HTMLReportReader: NSObject, XMLParserDelegate {
    var sections: [String] = []
    /// placement → source → field → text
    var cells: [String: [String: [String: String]]] = [:]
    var chartTitles: [String: [String]] = [:]
    var embeddedJSON = ""
    var externalReferences: [String] = []
    private var placement: String?
    private var source: String?
    private var field: String?
    private var text = ""
    private var inData = false

    func parser(
        _ parser: XMLParser, didStartElement element: String, namespaceURI: String?, qualifiedName: String?,
        attributes: [String: String] = [:]
    ) {
        if let href = attributes["href"] ?? attributes["src"] { externalReferences.append(href) }
        switch element {
        case "section":
            placement = attributes["data-placement"]
            if let placement { sections.append(placement) }
        case "tr": source = attributes["data-source"]
        case "td":
            field = attributes["data-field"]
            text = ""
        case "svg":
            if let placement, let label = attributes["aria-label"] { chartTitles[placement, default: []].append(label) }
        case "script":
            inData = attributes["id"] == "report-data"
            text = ""
        default: break
        }
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) { text += string }

    func parser(_ parser: XMLParser, didEndElement element: String, namespaceURI: String?, qualifiedName: String?) {
        switch element {
        case "td":
            if let placement, let source, let field {
                cells[placement, default: [:]][source, default: [:]][field] = text
            }
            field = nil
        case "script" where inData:
            embeddedJSON = text
            inData = false
        case "section": placement = nil
        default: break
        }
    }
}

@Suite("mediate compare --format html", .serialized, .timeLimit(.minutes(2)))
struct HTMLReportTests {
    @Test func everyPlacementAppearsWithTheNumbersOfTheRun() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("report-\(UUID().uuidString).html")
            .path
        let run = try await mediate(["compare", "--requests", "12", "--format", "html", "--output", path, "--quiet"])
        #expect(run.code == 0, "stderr: \(run.err)")
        let reader = HTMLReportReader()
        let parser = XMLParser(data: try Data(contentsOf: URL(fileURLWithPath: path)))
        parser.delegate = reader
        #expect(parser.parse(), "the report is well-formed: \(String(describing: parser.parserError))")
        #expect(reader.externalReferences.isEmpty, "no external requests: \(reader.externalReferences)")

        let root = try #require(
            try JSONSerialization.jsonObject(with: Data(reader.embeddedJSON.utf8)) as? [String: Any])
        let placements = try #require(root["placements"] as? [[String: Any]])
        let demo = ["home_tile", "main_banner", "rewarded_coins", "launch"]
        #expect(Set(placements.compactMap { $0["id"] as? String }).isSuperset(of: demo), "the demo's placements")
        #expect(reader.sections == placements.compactMap { $0["id"] as? String }, "one section per placement, in order")
        for placement in placements {
            let id = try #require(placement["id"] as? String)
            let waterfall = try #require(reader.cells[id]?["waterfall"], "\(id): no waterfall row")
            #expect(waterfall["requests"] == "12")
            let fills = try #require(placement["fills"] as? Int)
            #expect(waterfall["fills"] == "\(fills)")
            #expect(waterfall["fill_rate"] == String(format: "%.1f%%", Double(fills) / 12 * 100), "\(id)")
            let latency = try #require(placement["latency_ms"] as? [String: Double])
            #expect(waterfall["p50"] == String(format: "%.2f", latency["p50"] ?? -1), "\(id) p50")
            let revenueObject = try #require(placement["revenue"] as? [String: Any])
            let revenue = try #require(revenueObject["per_1000_requests_usd"] as? Double)
            // A placement that filled without any price shows "—" (issue 47), not $0.0000.
            let precisions = Set((revenueObject["fills_by_precision"] as? [String: Int] ?? [:]).keys)
            let unpriced = fills > 0 && precisions.isSubset(of: ["undefined"])
            #expect(
                waterfall["revenue_per_1000"] == (unpriced ? "—" : String(format: "$%.4f", revenue)), "\(id) revenue")
            for line in try #require(placement["lines"] as? [[String: Any]]) {
                let source = "\(line["network"] ?? "")/\(line["placement"] ?? "")"
                let row = try #require(reader.cells[id]?[source], "\(id): no row for \(source)")
                #expect(row["requests"] == "12" && row["wins"] == "\(line["wins"] ?? "")", "\(id) \(source)")
            }
            let charts = reader.chartTitles[id] ?? []
            for chart in [
                "Fill rate", "Estimated revenue per 1000 requests (USD)", "Latency p50 / p95 / p99 (ms)",
                "Latency distribution",
            ] {
                #expect(charts.contains(chart), "\(id): missing chart \(chart)")
            }
        }
    }
}

import Foundation
import TestSupport
import Testing

@testable import mediate

/// Issue 49 item 3: every report, for fixed inputs, byte for byte the committed golden under `Fixtures/report-golden/`
/// (written by the code that built the reports as dictionaries, before they became typed models): the JSON of
/// `compare` (printed and embedded in the HTML), `--arms`, `load` (mediated and a network alone, with `--bodies`),
/// `list` and `consent`; and the compare report's tables, CSV and HTML. `MEDIATE_RECORD_GOLDEN=1` rewrites them
/// (then read the diff: a golden changes only with an intended change of an output).
@Suite("reports: byte for byte their goldens", .serialized, .timeLimit(.minutes(2)))
struct ReportGoldenTests {
    static let folder = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/report-golden")

    /// Compares `output` with the golden `name` (or records it), naming the first line that differs.
    static func check(_ output: String, _ name: String) throws {
        let url = folder.appendingPathComponent(name)
        if ProcessInfo.processInfo.environment["MEDIATE_RECORD_GOLDEN"] == "1" {
            try output.write(to: url, atomically: true, encoding: .utf8)
            return
        }
        let golden = try String(contentsOf: url, encoding: .utf8)
        guard output != golden else { return }
        let new = output.components(separatedBy: "\n")
        let old = golden.components(separatedBy: "\n")
        let differing = zip(new, old).enumerated().first { $0.element.0 != $0.element.1 }
        let line = differing?.offset ?? min(new.count, old.count)
        Issue.record(
            """
            \(name) differs from its golden at line \(line + 1):
              golden: \(line < old.count ? old[line] : "<end>")
              now:    \(line < new.count ? new[line] : "<end>")
            """)
    }

    @Test func theCompareJSONIsByteIdenticalToItsGolden() throws {
        let reports = GoldenInputs.reports
        try Self.check(Reports.json(reports), "compare.json")
        let partial = PartialRun(done: 25, planned: 40)
        try Self.check(Reports.json(reports, partial: partial, given: ["--gdpr 1"]), "compare-partial.json")
        try Self.check(Reports.embeddedJSON(reports, given: ["--gdpr 1"]), "compare-embedded.json")
    }

    @Test func theArmsJSONIsByteIdenticalToItsGolden() throws {
        try Self.check(ArmsRunner.render(GoldenInputs.arms, json: true), "arms.json")
    }

    @Test func theArmsTableIsByteIdenticalToItsGolden() throws {
        try Self.check(ArmsRunner.render(GoldenInputs.arms, json: false), "arms.txt")
    }

    @Test func theLoadJSONOfAMediatedRequestIsByteIdenticalToItsGolden() throws {
        let redaction = Redaction(["s3cret-key"])
        let filled = Load.json(
            placement: "home", winner: GoldenInputs.winner, mediated: GoldenInputs.trace, alone: nil,
            exchanges: GoldenInputs.exchanges, redaction: redaction)
        try Self.check(filled, "load-mediated.json")
        let empty = Load.json(
            placement: "home", winner: nil, mediated: GoldenInputs.emptyTrace, alone: nil, exchanges: nil,
            redaction: redaction)
        try Self.check(empty, "load-empty.json")
    }

    @Test func theLoadJSONOfANetworkAloneIsByteIdenticalToItsGolden() throws {
        for (name, (outcome, winner)) in GoldenInputs.alone.sorted(by: { $0.key < $1.key }) {
            let alone = AloneAnswer(
                network: "ao", placement: "x", privacy: name == "fill" ? ["coppa"] : [], outcome: outcome,
                latencyMs: 12.346)
            let json = Load.json(
                placement: "launch", winner: winner, mediated: nil, alone: alone, exchanges: nil,
                redaction: Redaction([]))
            try Self.check(json, "load-alone-\(name).json")
        }
    }

    @Test func theListAndConsentJSONAreByteIdenticalToTheirGoldens() async throws {
        let config = try writeConfig(GoldenInputs.config)
        let list = try await mediate(["list", "--config", config, "--json"])
        #expect(list.code == 0, "\(list.err)")
        try Self.check(list.out, "list.json")
        var tcf = TCFTestString()
        tcf.purposeConsents = [1, 2, 7]
        tcf.vendorConsents = [1, 2, 755]
        tcf.specialFeatureOptIns = [1]
        tcf.restrictions = [(purpose: 2, type: 1, vendors: [755, 756])]
        tcf.disclosedVendors = [1, 2, 755]
        let consent = try await mediate([
            "consent", "--config", config, "--json", "--gdpr", "1", "--tcf", tcf.encoded, "--us-privacy", "1YYN",
            "--gpp", "DBABzw~1YNN~BVVqAAEABCA.QA", "--gpp-sid", "2,7", "--coppa",
        ])
        #expect(consent.code == 0, "\(consent.err)")
        try Self.check(consent.out, "consent.json")
        let malformed = try await mediate(["consent", "--config", config, "--json", "--tcf", "CPXxRfAPXxRfAAfKABENB"])
        #expect(malformed.code == 0, "\(malformed.err)")
        try Self.check(malformed.out, "consent-malformed.json")
    }

    @Test func theCompareTablesCSVAndHTMLAreByteIdenticalToTheirGoldens() throws {
        let reports = GoldenInputs.reports
        let baseline = try Baseline.parse(Data(GoldenInputs.baselineJSON.utf8), name: "old.json")
        let run = RunInfo(date: Date(timeIntervalSince1970: 0), requests: 14, concurrency: 1, against: "x")
        try Self.check(
            Reports.render(reports, as: .table, run: run, baseline: baseline), "compare-table.txt")
        try Self.check(Reports.render(reports, as: .table, wide: true), "compare-wide.txt")
        try Self.check(Reports.render(reports, as: .csv), "compare.csv")
        try Self.check(Reports.html(reports, baseline: baseline), "compare.html")
    }
}

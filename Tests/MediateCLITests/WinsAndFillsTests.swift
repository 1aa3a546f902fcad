import Testing

@testable import AdMediation
@testable import mediate

/// Issue 47: a line's row can show more wins than fills. Its fills are its network's asked alone and its wins the
/// waterfall's requests it won, two runs: the report says so under each table. A request run by an A/B arm with
/// lines of its own is counted on the row of the line it actually won, not on the row at the arm's index.
@Suite("compare: wins and fills")
struct WinsAndFillsTests {
    static let base = [WaterfallLine(network: "ao", placement: "x"), WaterfallLine(network: "cb", placement: "y")]

    /// A tally of `requests` with `fills` filled, each fill won by line `winner` when given.
    static func tally(requests: Int, fills: Int, winner: Int? = nil) -> Tally {
        var tally = Tally()
        for index in 0..<requests {
            var sample = Sample(nil)
            sample.filled = index < fills
            sample.winner = index < fills ? winner : nil
            tally.record(latency: .milliseconds(5), second: 0, sample)
        }
        return tally
    }

    /// A trace won by the first of `lines`, run under `label`.
    static func trace(_ lines: [WaterfallLine], label: String?) -> MediationTrace {
        MediationTrace(
            placement: "p",
            lines: lines.map {
                LineTrace(network: $0.network, placement: $0.placement, outcome: .fill, latency: nil, ecpm: nil)
            }, winnerIndex: 0, duration: .zero, abLabel: label)
    }

    @Test func theHTMLSaysUnderEachTableWhyWinsCanExceedFills() {
        let reports = ["home", "menu"].map { id in
            PlacementReport(
                id: id, mediated: Self.tally(requests: 10, fills: 7, winner: 0),
                lines: [("ao", "x", Self.tally(requests: 10, fills: 5))])
        }
        let html = Reports.html(reports)
        #expect(html.contains(#"<td data-field="fills">5</td>"#), "the line filled 5 alone")
        #expect(html.contains(#"<td data-field="wins">7</td>"#), "and won 7 in the waterfall")
        let notes = html.components(separatedBy: #"<p class="note" data-field="wins_meaning">"#).count - 1
        #expect(notes == 2, "one note per placement's table")
        #expect(html.contains("a line may win more requests in the waterfall than it filled alone"))
        #expect(html.contains(#"<th title="A line's fills"#), "the column's heading says it too")
    }

    /// A placement whose line filled 5 alone and won 7 in the waterfall.
    static var moreWinsThanFills: [PlacementReport] {
        [
            PlacementReport(
                id: "home", mediated: Self.tally(requests: 10, fills: 7, winner: 0),
                lines: [("ao", "x", Self.tally(requests: 10, fills: 5))])
        ]
    }

    @Test(arguments: [false, true])
    func theTableSaysUnderItWhyWinsCanExceedFills(wide: Bool) {
        let text = Reports.render(Self.moreWinsThanFills, as: .table, wide: wide)
        let note = text.split(separator: "\n").drop { !$0.hasPrefix("note: a line's fill is its network's") }
        #expect(!note.isEmpty, "\(text)")
        let sentence = note.map { $0.drop { $0 == " " } }.joined(separator: " ")
        #expect(sentence.contains("a line can win more requests than it filled alone"), "\(text)")
        #expect(note.allSatisfy { $0.count <= Reports.compactWidth }, "wrapped within 80 columns")
    }

    @Test func theCSVHeaderNamesTheRunEachCountComesFrom() {
        let csv = Reports.render(Self.moreWinsThanFills, as: .csv)
        let rows = csv.split(separator: "\n").map { $0.split(separator: ",", omittingEmptySubsequences: false) }
        let header = rows.first ?? []
        #expect(header.contains("fills_in_own_run") && header.contains("wins_in_waterfall_run"), "\(header)")
        #expect(rows.dropFirst().allSatisfy { $0.count == header.count }, "one header row, then rows of its width")
        let line = rows.last ?? []
        let fills = header.firstIndex(of: "fills_in_own_run").map { line[$0] }
        let wins = header.firstIndex(of: "wins_in_waterfall_run").map { line[$0] }
        #expect(fills == "5" && wins == "7", "the line's row: 5 fills alone, 7 wins in the waterfall")
    }

    @Test func anArmsOwnLineIsCountedOnTheRowOfItsNetworkAndAdUnit() {
        let placement = PlacementConfiguration(
            format: .interstitial, lines: Self.base,
            arms: [PlacementArm(label: "b", lines: [WaterfallLine(network: "cb", placement: "y")])])
        let trace = Self.trace([WaterfallLine(network: "cb", placement: "y")], label: "b")
        #expect(CompareRunner.baseLine(wonIn: trace, of: placement) == 1, "cb/y is the second row, not the first")
    }

    @Test func anArmsLineOutsideThePlacementsOwnLinesIsCountedOnNoRow() {
        let placement = PlacementConfiguration(
            format: .interstitial, lines: Self.base,
            arms: [PlacementArm(label: "b", lines: [WaterfallLine(network: "mars", placement: "z")])])
        let trace = Self.trace([WaterfallLine(network: "mars", placement: "z")], label: "b")
        #expect(CompareRunner.baseLine(wonIn: trace, of: placement) == nil)
    }

    @Test func aRequestOnThePlacementsOwnLinesKeepsItsWinnersIndex() {
        let placement = PlacementConfiguration(format: .interstitial, lines: Self.base, abLabel: "exp")
        var trace = Self.trace(Self.base, label: "exp")
        trace.winnerIndex = 1
        #expect(CompareRunner.baseLine(wonIn: trace, of: placement) == 1)
    }
}

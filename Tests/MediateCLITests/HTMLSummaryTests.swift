import AdMediationTesting
import Foundation
import Testing

/// Issue 47 item 3: the HTML summary names a best source only on a significant difference and shows its numbers;
/// baseline changes have intervals; unpriced sources and the latency axis are drawn honestly.
@Suite("mediate compare: the HTML summary's claims", .serialized, .timeLimit(.minutes(2)))
struct HTMLSummaryTests {
    static func temporary() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("summary-\(UUID().uuidString).html").path
    }

    /// `compare` of the demo's `main_banner` as HTML, with `extra` arguments; the page.
    static func report(_ extra: [String] = []) async throws -> String {
        let path = temporary()
        let run = try await mediate(
            [
                "compare", "--placement", "main_banner", "--requests", "8", "--quiet", "--format", "html", "--output",
                path,
            ]
                + extra)
        #expect(run.code == 0, "\(run.err)")
        return try String(contentsOfFile: path, encoding: .utf8)
    }

    @Test func theBestSourceComesWithItsNumbersAndTheIntervalOfTheDifference() async throws {
        let html = try await Self.report()
        let cell = try #require(html.firstMatch(of: #/data-field="best_source">([^<]*)</td>/#)?.1, "\(html)")
        #expect(cell.contains(" vs waterfall $") && cell.contains(" per 1000 requests: "), "\(cell)")
        #expect(cell.contains(", CI "), "\(cell)")
        #expect(cell.hasPrefix("none significant (") || !cell.contains("not significant"), "\(cell)")
    }

    @Test func aBaselineChangeCarriesItsInterval() async throws {
        let baseline = FileManager.default.temporaryDirectory.appendingPathComponent("b-\(UUID().uuidString).json")
            .path
        let first = try await mediate([
            "compare", "--placement", "main_banner", "--requests", "8", "--quiet", "--format", "json", "--output",
            baseline,
        ])
        #expect(first.code == 0, "\(first.err)")
        let html = try await Self.report(["--baseline", baseline])
        #expect(html.contains(#"data-field="fill_rate_change_ci">CI "#), "\(html)")
        #expect(html.contains(#"data-field="revenue_per_1000_change_ci">CI "#), "\(html)")
    }

    @Test func theLatencyAxisHasTicksBetweenItsEnds() async throws {
        let html = try await Self.report()
        let start = try #require(html.range(of: #"aria-label="Latency distribution""#))
        let end = try #require(html[start.upperBound...].range(of: "</svg>"))
        let chart = html[start.upperBound..<end.lowerBound]
        #expect(chart.matches(of: #/text-anchor="middle">[0-9]+</text>/#).count == 3, "\(chart)")
    }

    @Test func anUnpricedSourceShowsADashNotZeroDollars() async throws {
        let box = ServerURL()
        let server = try LoopbackHTTPServer { request in
            guard request.path == "/appopen/v1/ad" else { return .respond(.text("")) }
            let object: [String: Any] = [
                "ad_id": "a1", "creative": ["type": "image", "url": "\(box.value)/img.png", "headline": "h"],
                "tracking": ["impression": "\(box.value)/imp", "click": "\(box.value)/click"],
            ]
            let body = (try? JSONSerialization.data(withJSONObject: object)) ?? Data()
            return .respond(.init(headers: [("Content-Type", "application/json")], body: Array(body)))
        }
        box.set(server.baseURL)
        defer { server.stop() }
        let path = Self.temporary()
        let run = try await mediate([
            "compare", "--config", try TerminalSafeOutputTests.config(server), "--requests", "3", "--quiet",
            "--format", "html", "--output", path,
        ])
        #expect(run.code == 0, "\(run.err)")
        let html = try String(contentsOfFile: path, encoding: .utf8)
        #expect(html.contains(#"<td data-field="revenue_per_1000">—</td>"#), "\(html)")
        #expect(!html.contains(#"<td data-field="revenue_per_1000">$0.0000</td>"#))
    }
}

import AdMediationTesting
import Foundation
import Testing

/// `compare --arms` reports 95 % confidence intervals and says when a difference is not significant (issue 33 item
/// 10). The expectations are computed here from the textbook formulas and the counts the command reports.
@Suite("mediate compare --arms: confidence intervals", .serialized, .timeLimit(.minutes(3)))
struct ArmsConfidenceTests {
    /// The Wilson score interval, z = 1.96 (Wilson 1927; Agresti & Coull 1998).
    static func wilson(_ successes: Int, _ n: Int) -> (Double, Double) {
        let z = 1.959_963_984_540_054
        let p = Double(successes) / Double(n)
        let denominator = 1 + z * z / Double(n)
        let centre = (p + z * z / (2 * Double(n))) / denominator
        let half = z * (p * (1 - p) / Double(n) + z * z / (4 * Double(n) * Double(n))).squareRoot() / denominator
        return (centre - half, centre + half)
    }

    @Test("each arm's fill interval is its Wilson interval; a difference is significant only when its CI excludes 0")
    func eachArmHasItsIntervals() async throws {
        let run = try await mediate([
            "compare", "--demo", "arms", "--placement", "drift_banner", "--arms", "static,optimized", "--requests",
            "60", "--seed", "4", "--format", "json", "--quiet",
        ])
        #expect(run.code == 0, "stderr: \(run.err)")
        let root = try #require(try JSONSerialization.jsonObject(with: Data(run.out.utf8)) as? [String: Any])
        let arms = try #require((root["arms"] as? [[String: Any]])?.first?["arms"] as? [[String: Any]])
        #expect(arms.count == 2)
        for arm in arms {
            let fills = try #require(arm["fills"] as? Int)
            let requests = try #require(arm["requests"] as? Int)
            let interval = try #require(arm["fill_rate_ci95"] as? [Double])
            let (low, high) = Self.wilson(fills, requests)
            #expect(
                interval.count == 2 && abs(interval[0] - low) < 1e-4 && abs(interval[1] - high) < 1e-4,
                "\(fills)/\(requests): \(interval) vs \(low)…\(high)")
            let revenue = try #require(arm["revenue_per_mille"] as? Double)
            let revenueInterval = try #require(arm["revenue_per_mille_ci95"] as? [Double])
            #expect(revenueInterval[0] <= revenue + 1e-3 && revenue - 1e-3 <= revenueInterval[1], "\(revenueInterval)")
        }
        #expect(arms[0]["vs_first"] == nil, "the first arm is the reference")
        let versus = try #require(arms[1]["vs_first"] as? [String: Any])
        let difference = try #require(versus["fill_rate_difference_ci95"] as? [Double])
        let significant = try #require(versus["fill_rate_significant"] as? Bool)
        #expect(significant == !(difference[0] <= 0 && difference[1] >= 0), "\(versus)")
        let revenueDifference = try #require(versus["revenue_per_mille_difference_ci95"] as? [Double])
        let revenueSignificant = try #require(versus["revenue_per_mille_significant"] as? Bool)
        #expect(revenueSignificant == !(revenueDifference[0] <= 0 && revenueDifference[1] >= 0), "\(versus)")
    }

    @Test("two arms on the same demand that never fills are 'not significant', in the table")
    func identicalArmsAreNotSignificant() async throws {
        let server = try LoopbackHTTPServer { _ in .respond(.text("", status: 204)) }
        defer { server.stop() }
        let config = try writeConfig(
            """
            {"networks": {"ao": {"type": "appopen", "base_url": "\(server.baseURL)/appopen"}},
             "placements": {"launch": {"format": "app_open", "lines": [{"network": "ao", "placement": "x", \
            "timeout_ms": 2000}]}}}
            """)
        let run = try await mediate([
            "compare", "--config", config, "--arms", "static,optimized", "--requests", "20", "--quiet",
        ])
        #expect(run.code == 0, "stderr: \(run.err)")
        #expect(run.out.contains("optimized − static: fill +0.0 pts (CI +0.0…+0.0): not significant"), "\(run.out)")
        #expect(run.out.contains("optimized − static: rev/1000 +0.000 (CI +0.000…+0.000): not significant"))
        // 0 fills of 20: the Wilson interval is [0, z²/n / (1 + z²/n)] = [0, 16.1 %], not an empty [0, 0].
        #expect(run.out.contains("  static     [0.0%, 16.1%]"), "\(run.out)")
        for line in run.out.split(separator: "\n") { #expect(line.count <= 80, "\(line)") }
    }
}

import AdMediation
import AdMediationTesting
import AdNetworkConformance
import Logging
import MetricsTestKit
import TestSupport
import Testing

@Suite("Impression-level revenue", .timeLimit(.minutes(1)))
struct RevenueTests {
    /// One mediated load over `lines` (networks `a` and `b`, zero latency) in placement `p`.
    func mediatedAd(
        a: ScriptedAdNetwork.Step, b: ScriptedAdNetwork.Step, lines: [WaterfallLine], abLabel: String? = nil,
        metrics: TestMetrics = TestMetrics(), logs: LogCapture = LogCapture()
    ) async throws -> LoadedAd {
        let clock = ManualAdClock()
        let networks = [
            ScriptedAdNetwork(id: "a", clock: clock, fallback: a),
            ScriptedAdNetwork(id: "b", clock: clock, fallback: b),
        ]
        var config = placement(lines)
        config.abLabel = abLabel
        let mediator = try Mediator(
            networks: networks, configuration: .init(placements: ["p": config]), clock: clock,
            logger: logs.logger(label: "admediation.mediator"), metrics: metrics)
        let result = try await mediator.load(interstitial)
        return try #require(result.ad)
    }

    @Test func aNetworkPricedFillIsEstimatedRevenueOfOneThousandthOfItsEcpmOnTheWinningLine() async throws {
        let ad = try await mediatedAd(
            a: .noFill(), b: .fill(ecpm: 2.5),
            lines: [.init(network: "a", placement: "a1"), .init(network: "b", placement: "b1", ecpm: 9)],
            abLabel: "arm-b")
        let revenue = ad.revenue
        #expect(revenue.precision == .estimated)
        #expect(revenue.value == 0.0025)
        #expect(revenue.currency == "USD")
        #expect(revenue.networkID == "b" && revenue.placement == "p")
        #expect(revenue.line == WinningLine(index: 1, network: "b", networkPlacement: "b1", abLabel: "arm-b"))
    }

    @Test func anUnpricedFillTakesTheLinesPublisherDefinedPrice() async throws {
        let ad = try await mediatedAd(
            a: .fill(ecpm: nil), b: .noFill(),
            lines: [.init(network: "a", placement: "a1", ecpm: 4), .init(network: "b", placement: "b1")])
        #expect(ad.ecpm == 4)
        #expect(ad.revenue.precision == .publisherDefined)
        #expect(ad.revenue.value == 0.004)
    }

    @Test func anUnpricedFillOnALineWithoutAPriceIsUndefinedAndWorthZero() async throws {
        let ad = try await mediatedAd(a: .fill(ecpm: nil), b: .noFill(), lines: [.init(network: "a", placement: "a1")])
        #expect(ad.ecpm == nil)
        #expect(ad.revenue.precision == .undefined)
        #expect(ad.revenue.value == 0)
    }

    @Test func anImpressionIsCountedWithItsRevenueInMicrosByPrecisionAndABLabel() async throws {
        let metrics = TestMetrics(), logs = LogCapture()
        let ad = try await mediatedAd(
            a: .fill(ecpm: 3.2), b: .noFill(), lines: [.init(network: "a", placement: "a1")], abLabel: "control",
            metrics: metrics, logs: logs)
        #expect(throws: (any Error).self) {
            try metrics.expectCounter("admediation_impressions_total", [("placement", "p")])
        }
        try await ad.report(.impression)
        let dimensions = [("placement", "p"), ("network", "a"), ("precision", "estimated"), ("ab_label", "control")]
        #expect(try metrics.expectCounter("admediation_impressions_total", dimensions).totalValue == 1)
        #expect(try metrics.expectCounter("admediation_impression_revenue_micros", dimensions).totalValue == 3200)
        let record = try #require(logs.all.first { $0.message == "impression" })
        #expect(
            record.metadata["revenue_usd"] == "0.0032" && record.metadata["line"] == "0"
                && record.metadata["ab_label"] == "control")
    }

    @Test func theABLabelIsOnTheTrace() async throws {
        let clock = ManualAdClock()
        var config = placement([.init(network: "a", placement: "a1")])
        config.abLabel = "waterfall-2"
        let mediator = try Mediator(
            networks: [ScriptedAdNetwork(id: "a", clock: clock, fallback: .noFill())],
            configuration: .init(placements: ["p": config]),
            clock: clock, logger: LogCapture().logger(label: "admediation.mediator"))
        #expect(await mediator.loadWithTrace(interstitial).trace.abLabel == "waterfall-2")
    }

    @Test func anABLabelWithASpaceIsRefusedAtItsField() throws {
        var config = placement([.init(network: "a", placement: "a1")])
        config.abLabel = "arm b"
        #expect {
            try Mediator(networks: [ScriptedAdNetwork(id: "a")], configuration: .init(placements: ["p": config]))
        } throws: { error in
            (error as? AdError)?.message.hasPrefix("placements.p.ab_label:") == true
        }
    }

    @Test func aLinePriceOutsideItsRangeIsRefusedAtItsField() throws {
        let config = placement([.init(network: "a", placement: "a1", ecpm: -1)])
        #expect {
            try Mediator(networks: [ScriptedAdNetwork(id: "a")], configuration: .init(placements: ["p": config]))
        } throws: { error in
            (error as? AdError)?.message.hasPrefix("placements.p.lines[0].ecpm:") == true
        }
    }

    @Test func revenueMicrosOfAHugePriceAreClamped() {
        let revenue = ImpressionRevenue(value: 1e300, precision: .estimated, networkID: "n", placement: "p")
        #expect(revenue.micros == 1_000_000_000_000)
        #expect(ImpressionRevenue(value: .nan, precision: .estimated, networkID: "n", placement: "p").micros == 0)
    }
}

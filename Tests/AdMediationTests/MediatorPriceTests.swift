import AdMediation
import AdMediationTesting
import Testing

/// A scripted network that fills without a price and declares that it reports none (as MARS does).
private struct UnpricedNetwork: AdNetwork {
    let inner = ScriptedAdNetwork(id: "unpriced", fallback: .fill())
    var id: String { inner.id }
    var capabilities: AdNetworkCapabilities { AdNetworkCapabilities(formats: inner.capabilities.formats) }

    func load(_ request: AdRequest) async throws -> AdLoadResult { try await inner.load(request) }
}

/// A mediator's `reportsPrice` says whether its fills may carry a price: a network's own, or a line's `ecpm`.
@Suite("A mediator's price declaration", .timeLimit(.minutes(1)))
struct MediatorPriceTests {
    static func mediator(_ networks: [any AdNetwork], lineECPM: Double? = nil) throws -> Mediator {
        let line = WaterfallLine(network: "unpriced", placement: "a", ecpm: lineECPM)
        return try Mediator(
            networks: networks,
            configuration: MediationConfiguration(
                placements: ["p": PlacementConfiguration(format: .interstitial, lines: [line])]))
    }

    @Test("a mediator over networks that report no price, with no line ecpm, reports none")
    func noPricedNetworkAndNoLinePriceReportsNone() throws {
        #expect(try Self.mediator([UnpricedNetwork()]).capabilities.reportsPrice == false)
    }

    @Test("a line's ecpm makes the mediator report prices")
    func aLinePriceMakesTheMediatorReportPrices() throws {
        #expect(try Self.mediator([UnpricedNetwork()], lineECPM: 2).capabilities.reportsPrice)
    }

    @Test("an arm's line ecpm makes the mediator report prices")
    func anArmsLinePriceMakesTheMediatorReportPrices() throws {
        let priced = WaterfallLine(network: "unpriced", placement: "b", ecpm: 2)
        var placement = PlacementConfiguration(
            format: .interstitial, lines: [WaterfallLine(network: "unpriced", placement: "a")])
        placement.arms = [PlacementArm(label: "b", weight: 1, lines: [priced])]
        let mediator = try Mediator(
            networks: [UnpricedNetwork()], configuration: MediationConfiguration(placements: ["p": placement]))
        #expect(mediator.capabilities.reportsPrice)
    }

    @Test("a mediator with one network that reports prices reports prices")
    func aPricedNetworkMakesTheMediatorReportPrices() throws {
        #expect(try Self.mediator([UnpricedNetwork(), ScriptedAdNetwork(id: "priced")]).capabilities.reportsPrice)
    }

    @Test("a nested mediator takes its inner mediator's declaration", arguments: [nil, 2] as [Double?])
    func aNestedMediatorTakesTheInnerDeclaration(lineECPM: Double?) throws {
        let inner = try Self.mediator([UnpricedNetwork()], lineECPM: lineECPM)
        let outer = try Mediator(
            id: "outer", networks: [inner],
            configuration: MediationConfiguration(
                placements: [
                    "p": PlacementConfiguration(
                        format: .interstitial, lines: [WaterfallLine(network: inner.id, placement: "p")])
                ]))
        #expect(outer.capabilities.reportsPrice == (lineECPM != nil))
    }
}

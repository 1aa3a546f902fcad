import AdMediation
import AdMediationTesting
import AdNetworkConformance
import Testing

/// A scripted network that fills `fill` at `ecpm` and declares whether it reports prices.
private struct DeclaringNetwork: AdNetwork {
    let inner: ScriptedAdNetwork
    let capabilities: AdNetworkCapabilities
    var id: String { inner.id }

    init(reportsPrice: Bool, ecpm: Double?) {
        inner = ScriptedAdNetwork(id: "declaring", script: ["fill": [.fill(ecpm: ecpm)]])
        capabilities = AdNetworkCapabilities(formats: inner.capabilities.formats, reportsPrice: reportsPrice)
    }

    func load(_ request: AdRequest) async throws -> AdLoadResult { try await inner.load(request) }

    /// The subject, by `path`.
    func subject(_ path: ConformancePath) throws -> ConformanceSubject {
        try ConformanceSubject(
            network: self, wire: inner, fillRequest: AdRequest(placement: "fill", format: .interstitial)
        )
        .through(path)
    }
}

/// Rule 1 holds a fill's price to the network's declaration (`reportsPrice`), bare and through mediators.
@Suite("A network's price declaration", .timeLimit(.minutes(1)))
struct PriceDeclarationTests {
    @Test("a priced fill from a network that reports no price breaks rule 1", arguments: ConformancePath.allCases)
    func aPriceFromANetworkThatReportsNoneBreaksRuleOne(path: ConformancePath) async throws {
        let subject = try DeclaringNetwork(reportsPrice: false, ecpm: 2).subject(path)
        await #expect(throws: ConformanceFailure.self) { try await AdNetworkConformance.fillIsWellFormed(subject) }
    }

    @Test("an unpriced fill from a network that reports no price is well formed", arguments: ConformancePath.allCases)
    func anUnpricedFillFromANetworkThatReportsNoneIsWellFormed(path: ConformancePath) async throws {
        let subject = try DeclaringNetwork(reportsPrice: false, ecpm: nil).subject(path)
        try await AdNetworkConformance.fillIsWellFormed(subject)
    }

    @Test("a priced fill from a network that reports prices is well formed", arguments: ConformancePath.allCases)
    func aPriceFromANetworkThatReportsPricesIsWellFormed(path: ConformancePath) async throws {
        let subject = try DeclaringNetwork(reportsPrice: true, ecpm: 2).subject(path)
        try await AdNetworkConformance.fillIsWellFormed(subject)
    }
}

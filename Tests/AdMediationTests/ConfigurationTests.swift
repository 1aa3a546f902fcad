import AdMediation
import AdMediationTesting
import Testing

/// The configuration as plain values, built in code (its file form is tested with `MediationFileFormat`).
@Suite("Mediation configuration", .timeLimit(.minutes(2)))
struct ConfigurationTests {
    @Test("a placement built in code loads by id with its declared format")
    func placementDeclaredOnceLoadsWithoutNamingItsFormat() async throws {
        let network = ScriptedAdNetwork(id: "mars", formats: [.tile], fallback: .fill(ecpm: 2))
        let mediator = try Mediator(
            networks: [network],
            configuration: MediationConfiguration(placements: [
                "home": PlacementConfiguration(format: .tile, lines: [WaterfallLine(network: "mars", placement: "a")])
            ]))
        guard case .filled(let ad) = try await mediator.load("home") else {
            Issue.record("no fill")
            return
        }
        #expect(ad.format == .tile)
        #expect(network.requests.map(\.format) == [.tile])
    }

    @Test("a deadline out of range built in code is refused naming its file field")
    func outOfRangeDurationBuiltInCodeNamesTheJSONField() {
        let configuration = MediationConfiguration(placements: [
            "p": PlacementConfiguration(
                format: .tile, lines: [WaterfallLine(network: "mars", placement: "a")], deadline: .seconds(700))
        ])
        #expect(throws: AdError.self) { try configuration.validate(networks: ["mars": [.tile]]) }
        do {
            try configuration.validate(networks: ["mars": [.tile]])
        } catch {
            #expect(error.message == "placements.p.deadline_ms: must be 1…600000, got 700000.0")
        }
    }
}

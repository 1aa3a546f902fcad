import AdMediation
import AdMediationTesting
import AdNetworkConformance
import Foundation
import Testing

@Suite("Mediation configuration", .timeLimit(.minutes(2)))
struct ConfigurationTests {
    let networks: [any AdNetwork] = [ScriptedAdNetwork(id: "gc"), ScriptedAdNetwork(id: "mars", formats: ["tile"])]

    func error(_ json: String) -> String? {
        do {
            let configuration = try MediationConfiguration.decode(json: Data(json.utf8))
            _ = try Mediator(networks: networks, configuration: configuration)
            return nil
        } catch {
            return error.message
        }
    }

    @Test func validJSONLoadsWithDefaults() throws {
        let configuration = try MediationConfiguration.decode(
            json: Data(
                """
                {"placements": {"home": {"format": "tile", "lines": [{"network": "mars", "placement": "mock_tile_1"}]}}}
                """.utf8))
        let home = try #require(configuration.placements["home"])
        #expect(home.mode == .parallel)
        #expect(home.lines[0].timeoutMs == 1000)
        #expect(configuration.circuitBreaker.failureThreshold == 5)
        _ = try Mediator(networks: networks, configuration: configuration)
    }

    @Test func unknownNetworkNamesTheLine() {
        #expect(
            error(
                """
                {"placements": {"home_tile": {"format": "tile", "lines": [
                  {"network": "mars", "placement": "a"}, {"network": "gx", "placement": "b"}]}}}
                """) == #"placements.home_tile.lines[1].network: unknown network "gx""#)
    }

    @Test func emptyWaterfallIsRejected() {
        #expect(
            error(#"{"placements": {"p": {"format": "tile", "lines": []}}}"#)
                == "placements.p.lines: the waterfall is empty (and there are no bidders)")
    }

    @Test func negativeTimeoutIsRejected() {
        #expect(
            error(
                #"{"placements": {"p": {"format": "tile", "lines": [{"network": "mars", "placement": "a", "timeout_ms": -5}]}}}"#
            )
                == "placements.p.lines[0].timeout_ms: must be 1…600000, got -5")
    }

    @Test func duplicateLineIsRejected() {
        #expect(
            error(
                #"{"placements": {"p": {"format": "tile", "lines": [{"network": "mars", "placement": "a"}, {"network": "mars", "placement": "a"}]}}}"#
            )
                == #"placements.p.lines[1]: duplicate of lines[0] (network "mars", placement "a")"#)
    }

    @Test func networkThatDoesNotServeTheFormatIsRejected() {
        #expect(
            error(#"{"placements": {"p": {"format": "rewarded", "lines": [{"network": "mars", "placement": "a"}]}}}"#)
                == #"placements.p.lines[0].network: network "mars" does not serve format "rewarded""#)
    }

    @Test func bannerWithoutSizeIsRejected() {
        #expect(
            error(#"{"placements": {"p": {"format": "banner", "lines": [{"network": "gc", "placement": "a"}]}}}"#)
                == #"placements.p.size: a banner placement needs a size such as "320x50""#)
    }

    @Test func unknownFormatIsRejected() {
        #expect(
            error(#"{"placements": {"p": {"format": "poster", "lines": [{"network": "gc", "placement": "a"}]}}}"#)?
                .hasPrefix(#"placements.p.format: unknown format "poster""#) == true)
    }

    @Test func wrongTypeNamesTheFieldPath() {
        #expect(
            error(
                #"{"placements": {"p": {"format": "tile", "lines": [{"network": "mars", "placement": "a", "timeout_ms": "fast"}]}}}"#
            )?
            .hasPrefix("placements.p.lines[0].timeout_ms: expected a number") == true)
    }

    @Test func missingFieldNamesTheFieldPath() {
        #expect(
            error(#"{"placements": {"p": {"format": "tile", "lines": [{"network": "mars"}]}}}"#)
                == "placements.p.lines[0].placement: required field is missing")
    }

    @Test func malformedJSONIsAConfigurationError() {
        #expect(error("{not json")?.hasPrefix("configuration:") == true)
    }
}

import AdMediation
import AdMediationTesting
import Foundation
import MediationFileFormat
import Testing

/// The mediation configuration's JSON file form: defaults, field paths in errors, the round trip.
@Suite("Mediation configuration file", .timeLimit(.minutes(2)))
struct ConfigurationFileTests {
    let networks: [any AdNetwork] = [ScriptedAdNetwork(id: "gc"), ScriptedAdNetwork(id: "mars", formats: [.tile])]

    func error(_ json: String) -> String? {
        do {
            let configuration = try MediationConfiguration.decode(json: Data(json.utf8), formats: [.tile])
            _ = try Mediator(networks: networks, configuration: configuration)
            return nil
        } catch {
            return error.message
        }
    }

    @Test("a placement with only its format and lines loads with every default")
    func validJSONLoadsWithDefaults() throws {
        let configuration = try MediationConfiguration.decode(
            json: Data(
                """
                {"placements": {"home": {"format": "tile", "lines": [{"network": "mars", "placement": "mock_tile_1"}]}}}
                """.utf8), formats: [.tile])
        let home = try #require(configuration.placements["home"])
        #expect(home.mode == .parallel)
        #expect(home.lines[0].timeout == .seconds(1))
        #expect(configuration.circuitBreaker.failureThreshold == 5)
        _ = try Mediator(networks: networks, configuration: configuration)
    }

    @Test("a line naming an unknown network is refused at that line")
    func unknownNetworkNamesTheLine() {
        #expect(
            error(
                """
                {"placements": {"home_tile": {"format": "tile", "lines": [
                  {"network": "mars", "placement": "a"}, {"network": "gx", "placement": "b"}]}}}
                """) == #"placements.home_tile.lines[1].network: unknown network "gx""#)
    }

    @Test("a placement with no lines and no bidders is refused")
    func emptyWaterfallIsRejected() {
        #expect(
            error(#"{"placements": {"p": {"format": "tile", "lines": []}}}"#)
                == "placements.p.lines: the waterfall is empty (and there are no bidders)")
    }

    @Test("a negative timeout_ms is refused at its field with the range")
    func negativeTimeoutIsRejected() {
        #expect(
            error(
                (#"{"placements": {"p": {"format": "tile", "lines": "#
                    + #"[{"network": "mars", "placement": "a", "timeout_ms": -5}]}}}"#)
            )
                == "placements.p.lines[0].timeout_ms: must be 1…600000, got -5")
    }

    @Test("the same network and placement twice in one waterfall is refused naming the first")
    func duplicateLineIsRejected() {
        #expect(
            error(
                (#"{"placements": {"p": {"format": "tile", "lines": [{"network": "#
                    + #""mars", "placement": "a"}, {"network": "mars", "placement": "a"}]}}}"#)
            )
                == #"placements.p.lines[1]: duplicate of lines[0] (network "mars", placement "a")"#)
    }

    @Test("a line whose network does not serve the placement's format is refused")
    func networkThatDoesNotServeTheFormatIsRejected() {
        #expect(
            error(#"{"placements": {"p": {"format": "rewarded", "lines": [{"network": "mars", "placement": "a"}]}}}"#)
                == #"placements.p.lines[0].network: network "mars" does not serve format "rewarded""#)
    }

    @Test("a banner placement without a size is refused at size")
    func bannerWithoutSizeIsRejected() {
        #expect(
            error(#"{"placements": {"p": {"format": "banner", "lines": [{"network": "gc", "placement": "a"}]}}}"#)
                == #"placements.p.size: a banner placement needs a size such as "320x50""#)
    }

    @Test("an unknown format is refused at format")
    func unknownFormatIsRejected() {
        #expect(
            error(#"{"placements": {"p": {"format": "poster", "lines": [{"network": "gc", "placement": "a"}]}}}"#)?
                .hasPrefix(#"placements.p.format: unknown format "poster""#) == true)
    }

    @Test("a string where a number belongs is refused at its field path")
    func wrongTypeNamesTheFieldPath() {
        #expect(
            error(
                (#"{"placements": {"p": {"format": "tile", "lines": [{"network": "#
                    + #""mars", "placement": "a", "timeout_ms": "fast"}]}}}"#)
            )?
            .hasPrefix("placements.p.lines[0].timeout_ms: expected a number") == true)
    }

    @Test("a missing required field is named by its path")
    func missingFieldNamesTheFieldPath() {
        #expect(
            error(#"{"placements": {"p": {"format": "tile", "lines": [{"network": "mars"}]}}}"#)
                == "placements.p.lines[0].placement: required field is missing")
    }

    @Test("JSON that does not parse is a configuration error")
    func malformedJSONIsAConfigurationError() {
        #expect(error("{not json")?.hasPrefix("configuration:") == true)
    }

    @Test("a configuration built in code encodes to its file form and decodes back equal")
    func typedConfigurationRoundTripsThroughItsJSONForm() throws {
        let configuration = MediationConfiguration(
            placements: [
                "b": PlacementConfiguration(
                    format: .banner(.medium),
                    lines: [WaterfallLine(network: "gc", placement: "x", timeout: .milliseconds(250))],
                    deadline: .milliseconds(1500), frequencyCap: 3, frequencyWindow: .seconds(90),
                    minInterval: .milliseconds(2500))
            ], circuitBreaker: CircuitBreakerConfiguration(failureThreshold: 2, coolDown: .seconds(12)))
        let json = try JSONEncoder().encode(configuration)
        let text = String(decoding: json, as: UTF8.self)
        #expect(text.contains(#""deadline_ms":1500"#) && text.contains(#""size":"300x250""#))
        #expect(try MediationConfiguration.decode(json: json) == configuration)
    }

    @Test("a negative _s field is refused at its field with the range")
    func secondsFieldOutOfRangeIsRefusedAtItsField() {
        #expect(
            error(
                (#"{"placements": {"p": {"format": "tile", "min_interval_s": "#
                    + #"-1, "lines": [{"network": "mars", "placement": "a"}]}}}"#)
            ) == "placements.p.min_interval_s: must be 0…604800, got -1.0")
    }
}

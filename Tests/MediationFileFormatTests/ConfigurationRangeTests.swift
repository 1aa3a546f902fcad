import AdMediation
import Foundation
import MediationFileFormat
import Testing

@Suite("Configuration numbers out of range", .timeLimit(.minutes(2)))
struct ConfigurationRangeTests {
    static let networks: [String: Set<AdFormat.Kind>] = ["mars": [.tile]]

    func error(_ placement: String, breaker: String = "{}") -> String? {
        let json =
            (#"{"circuit_breaker": \#(breaker), "placements": {"p": {"format": "tile", "lines": "#
                + #"[{"network": "mars", "placement": "a"\#(placement.isEmpty ? "" : ", ")\#(placement)}]}}}"#)
        do {
            try MediationConfiguration.decode(json: Data(json.utf8), formats: [.tile])
                .validate(networks: Self.networks)
            return nil
        } catch {
            return error.message
        }
    }

    @Test(
        "a line's number out of range or of the wrong type is refused at its field",
        arguments: [
            (
                #""timeout_ms": 9223372036854775807"#,
                "placements.p.lines[0].timeout_ms: must be a whole number, got 9.2"
            ),
            (#""timeout_ms": 600001"#, "placements.p.lines[0].timeout_ms: must be 1…600000, got 600001"),
            (#""timeout_ms": 1e308"#, "placements.p.lines[0].timeout_ms: must be a whole number, got 1e+308"),
            (#""timeout_ms": 0.5"#, "placements.p.lines[0].timeout_ms: must be a whole number, got 0.5"),
            (#""timeout_ms": "800""#, "placements.p.lines[0].timeout_ms: expected a number"),
            (#""floor_ecpm": 1e308"#, "placements.p.lines[0].floor_ecpm: must be 0…1000000, got 1e+308"),
            (#""floor_ecpm": -1e308"#, "placements.p.lines[0].floor_ecpm: must be 0…1000000, got -1e+308"),
            (#""floor_ecpm": null"#, nil),
        ])
    func lineNumbersOutOfRangeNameTheField(field: String, expected: String?) {
        let message = error(field)
        if let expected {
            #expect(message?.hasPrefix(expected) == true, "\(message ?? "nil")")
        } else {
            #expect(message == nil)
        }
    }

    @Test("placement numbers out of range are refused naming the field and the range")
    func placementNumbersOutOfRangeNameTheField() {
        func placementError(_ field: String) -> String? {
            let json =
                (#"{"placements": {"p": {"format": "tile", \#(field), "#
                    + #""lines": [{"network": "mars", "placement": "a"}]}}}"#)
            do {
                try MediationConfiguration.decode(json: Data(json.utf8), formats: [.tile])
                    .validate(networks: Self.networks)
                return nil
            } catch { return error.message }
        }
        #expect(
            placementError(#""frequency_window_s": 1e308"#)
                == "placements.p.frequency_window_s: must be over 0 and at most 604800, got 1e+308")
        #expect(
            placementError(#""min_interval_s": -1e308"#) == "placements.p.min_interval_s: must be 0…604800, got -1e+308"
        )
        #expect(placementError(#""deadline_ms": -5"#) == "placements.p.deadline_ms: must be 1…600000, got -5")
        #expect(placementError(#""max_in_flight": 65"#) == "placements.p.max_in_flight: must be 1…64, got 65")
        #expect(
            placementError(#""deadline_ms": 1e308"#) == "placements.p.deadline_ms: must be a whole number, got 1e+308")
        #expect(placementError(#""frequency_cap": 0"#) == "placements.p.frequency_cap: must be 1…1000000, got 0")
        #expect(
            placementError(#""deadline_ms": "5000""#)?.hasPrefix("placements.p.deadline_ms: expected a number") == true)
    }

    @Test("breaker numbers out of range are refused naming the field and the range")
    func circuitBreakerNumbersOutOfRangeNameTheField() {
        #expect(
            error("", breaker: #"{"cool_down_s": 1e308}"#)
                == "circuit_breaker.cool_down_s: must be 0…604800, got 1e+308")
        #expect(
            error("", breaker: #"{"failure_threshold": -1}"#)
                == "circuit_breaker.failure_threshold: must be 1…10000, got -1")
    }

    @Test("JSON nested deeper than the limit is refused before decoding")
    func aConfigurationNestedTooDeeplyIsRefused() {
        let json = Data(String(repeating: "[", count: 10_000).utf8)
        #expect(throws: AdError(.configuration, "configuration: nesting deeper than 32 levels")) {
            try MediationConfiguration.decode(json: json)
        }
    }
}

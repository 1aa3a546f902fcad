import AdMediation
import Foundation
import MediationFileFormat
import Testing

/// A misspelt key in the mediation configuration is refused at its path with the nearest valid key (issue 32 item 3):
/// before, `"floor_ecmp": 1` loaded and the floor silently took its default.
@Suite("Mediation configuration: unknown keys", .timeLimit(.minutes(1)))
struct UnknownKeyTests {
    /// The decoding error's message, or nil when the JSON decodes.
    func problem(_ json: String) -> String? {
        do {
            _ = try MediationConfiguration.decode(json: Data(json.utf8))
            return nil
        } catch {
            return error.message
        }
    }

    /// A placement `p` whose one line has `extra` added, and `placementExtra` added to the placement.
    func placement(line extra: String = "", placement placementExtra: String = "", root: String = "") -> String {
        """
        {"placements": {"p": {"format": "interstitial", \(placementExtra)
          "lines": [{"network": "n", "placement": "x", \(extra) "timeout_ms": 100}]}}\(root)}
        """
    }

    @Test("a misspelt floor key in a line is refused naming the line and floor_ecpm")
    func aMisspeltFloorInALineIsRefusedNamingTheLineAndTheFloorKey() {
        #expect(
            problem(placement(line: #""floor_ecmp": 1,"#))
                == #"placements.p.lines[0].floor_ecmp: unknown key; did you mean "floor_ecpm"?"#)
    }

    @Test("the same line with floor_ecpm spelt right loads its floor")
    func theSameLineWithTheKeySpeltRightLoadsItsFloor() throws {
        let configuration = try MediationConfiguration.decode(json: Data(placement(line: #""floor_ecpm": 1,"#).utf8))
        #expect(configuration.placements["p"]?.lines.first?.floorEcpm == 1)
    }

    @Test(
        "a misspelt key at any level is refused naming its path and the nearest valid key",
        arguments: [
            (#""max_inflight": 2,"#, "", #"placements.p.max_inflight: unknown key; did you mean "max_in_flight"?"#),
            (#""Deadline_ms": 2,"#, "", #"placements.p.Deadline_ms: unknown key; did you mean "deadline_ms"?"#),
            (
                #""optimizer": {"exploraton": 0.2},"#, "",
                #"placements.p.optimizer.exploraton: unknown key; did you mean "exploration"?"#
            ),
            (
                #""bidders": [{"network": "n", "placement": "b", "timeout": 100}],"#, "",
                #"placements.p.bidders[0].timeout: unknown key; did you mean "timeout_ms"?"#
            ),
            (
                #""arms": [{"label": "a", "wieght": 2}],"#, "",
                #"placements.p.arms[0].wieght: unknown key; did you mean "weight"?"#
            ),
            (
                "", #", "circuit_breaker": {"cool_down": 5}"#,
                #"circuit_breaker.cool_down: unknown key; did you mean "cool_down_s"?"#
            ),
            ("", #", "placement": {}"#, #"placement: unknown key; did you mean "placements"?"#),
        ])
    func aMisspeltKeyAtAnyLevelIsRefusedNamingItsPathAndTheNearestKey(
        placementExtra: String, root: String, expected: String
    ) {
        #expect(problem(placement(placement: placementExtra, root: root)) == expected)
    }

    @Test("an unknown key near no valid key is refused listing the valid keys")
    func aKeyNoValidKeyIsNearListsTheValidKeys() {
        #expect(
            problem(placement(line: #""colour": "red","#))
                == "placements.p.lines[0].colour: unknown key "
                + "(valid keys: ecpm, floor_ecpm, network, placement, timeout_ms)")
    }
}

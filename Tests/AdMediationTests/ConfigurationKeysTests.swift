import AdMediation
import AdapterKit
import Testing

/// The nearest valid key that an unknown-key error suggests (every configuration the project reads uses it).
@Suite("Configuration keys: the nearest valid key", .timeLimit(.minutes(1)))
struct ConfigurationKeysTests {
    @Test("a swap of neighbours counts as one edit and case is ignored")
    func nearestCountsASwapOfNeighboursAsOneEditAndIgnoresCase() {
        #expect(ConfigurationKeys.nearest(to: "flaor_ecpm", in: ["floor_ecpm", "ecpm"]) == "floor_ecpm")
        #expect(ConfigurationKeys.nearest(to: "floor_epcm", in: ["floor_ecpm"]) == "floor_ecpm")
        #expect(ConfigurationKeys.nearest(to: "eCPM", in: ["ecpm"]) == "ecpm")
    }

    @Test("a key missing its unit suffix suggests the key with the suffix")
    func nearestSuggestsTheKeyWithAUnitSuffixWhenNoneIsWithinTwoEdits() {
        #expect(ConfigurationKeys.nearest(to: "deadline", in: ["deadline_ms", "lines"]) == "deadline_ms")
    }

    @Test("a key three edits away suggests nothing")
    func nearestSuggestsNothingThreeEditsAway() {
        #expect(ConfigurationKeys.nearest(to: "flr_ecm", in: ["floor_ecpm"]) == nil)
        #expect(ConfigurationKeys.nearest(to: "x", in: ["y"]) == nil)
    }
}

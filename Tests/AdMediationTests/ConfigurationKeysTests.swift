import AdMediation
import Testing

/// The nearest valid key that an unknown-key error suggests (every configuration the project reads uses it).
@Suite("Configuration keys: the nearest valid key", .timeLimit(.minutes(1)))
struct ConfigurationKeysTests {
    @Test func nearestCountsASwapOfNeighboursAsOneEditAndIgnoresCase() {
        #expect(ConfigurationKeys.nearest(to: "flaor_ecpm", in: ["floor_ecpm", "ecpm"]) == "floor_ecpm")
        #expect(ConfigurationKeys.nearest(to: "floor_epcm", in: ["floor_ecpm"]) == "floor_ecpm")
        #expect(ConfigurationKeys.nearest(to: "eCPM", in: ["ecpm"]) == "ecpm")
    }

    @Test func nearestSuggestsTheKeyWithAUnitSuffixWhenNoneIsWithinTwoEdits() {
        #expect(ConfigurationKeys.nearest(to: "deadline", in: ["deadline_ms", "lines"]) == "deadline_ms")
    }

    @Test func nearestSuggestsNothingThreeEditsAway() {
        #expect(ConfigurationKeys.nearest(to: "flr_ecm", in: ["floor_ecpm"]) == nil)
        #expect(ConfigurationKeys.nearest(to: "x", in: ["y"]) == nil)
    }
}

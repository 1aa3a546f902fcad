import AdMediation
import Foundation
import MediationFileFormat
import Testing

/// Issue 47: the problems found while decoding the file are listed together, each at its field with the value at
/// fault, not only the first (a user fixing the file met them one run at a time).
@Suite("Mediation configuration: every decoding problem at once", .timeLimit(.minutes(1)))
struct DecodeProblemsTests {
    /// The error's message lines, or nil when the JSON decodes.
    func problems(_ json: String) -> [String]? {
        do {
            _ = try MediationConfiguration.decode(json: Data(json.utf8))
            return nil
        } catch {
            return error.message.split(separator: "\n").map(String.init)
        }
    }

    @Test func problemsInTwoPlacementsAreListedTogether() {
        let lines = problems(
            """
            {"placements": {
              "a": {"format": "interstitial", "lines": [{"network": "n", "placement": "x", "timeout_ms": 0}]},
              "b": {"format": "interstitial", "deadline_ms": 900000, "lines": [{"network": "n", "placement": "y"}]}}}
            """)
        #expect(
            lines == [
                "placements.a.lines[0].timeout_ms: must be 1…600000, got 0",
                "placements.b.deadline_ms: must be 1…600000, got 900000",
            ])
    }

    @Test func everyFieldOfOneLineWithAProblemIsListed() {
        let lines = problems(
            """
            {"placements": {"p": {"format": "interstitial", "lines": [
              {"network": "n", "placement": "x", "floor_ecmp": 1, "timeout_ms": -5, "ecpm": "high"}]}}}
            """)
        #expect(lines?.count == 3, "\(lines ?? [])")
        #expect(lines?.first == #"placements.p.lines[0].floor_ecmp: unknown key; did you mean "floor_ecpm"?"#)
        #expect(lines?.contains("placements.p.lines[0].timeout_ms: must be 1…600000, got -5") == true)
        #expect(lines?.contains { $0.hasPrefix("placements.p.lines[0].ecpm: expected a number") } == true)
    }

    @Test func everyUnknownKeyOfOneObjectIsListed() {
        let lines = problems(
            """
            {"placements": {"p": {"format": "interstitial", "mdoe": "sequential", "deadline": 100,
              "lines": [{"network": "n", "placement": "x"}]}}}
            """)
        #expect(
            lines == [
                #"placements.p.deadline: unknown key; did you mean "deadline_ms"?"#,
                #"placements.p.mdoe: unknown key; did you mean "mode"?"#,
            ])
    }

    @Test func aMisspeltRequiredKeyIsOneProblemNotAlsoAMissingOne() {
        let lines = problems(
            #"{"placements": {"p": {"format": "interstitial", "lines": [{"networ": "n", "placement": "x"}]}}}"#)
        #expect(lines == [#"placements.p.lines[0].networ: unknown key; did you mean "network"?"#])
    }

    @Test func aProblemInTheBreakerIsListedWithThePlacementsProblems() {
        let lines = problems(
            """
            {"circuit_breaker": {"cool_down_s": -1},
             "placements": {"p": {"format": "bogus", "lines": [{"network": "n", "placement": "x"}]}}}
            """)
        #expect(lines?.count == 2, "\(lines ?? [])")
        #expect(lines?.first?.hasPrefix("placements.p.format: unknown format \"bogus\"") == true, "\(lines ?? [])")
        #expect(lines?.last?.hasPrefix("circuit_breaker.cool_down_s: ") == true, "\(lines ?? [])")
        #expect(lines?.last?.hasSuffix("got -1.0") == true, "the value at fault: \(lines ?? [])")
    }

    @Test func unreadableBiddersDoNotAlsoReportTheLinesMissing() {
        let lines = problems(#"{"placements": {"p": {"format": "interstitial", "bidders": {"network": "n"}}}}"#)
        #expect(lines?.count == 1, "\(lines ?? [])")
        #expect(lines?.first?.hasPrefix("placements.p.bidders: expected") == true, "\(lines ?? [])")
    }

    @Test func theFirstTwentyProblemsAreShownAndTheRestCounted() {
        let placements = (10..<35).map { #""p\#($0)": {"format": "interstitial", "lines": [], "max_in_flight": 1.5}"# }
        let lines = problems(#"{"placements": {\#(placements.joined(separator: ", "))}}"#)
        #expect(lines?.count == 21, "\(lines ?? [])")
        #expect(lines?.first == "placements.p10.max_in_flight: must be a whole number, got 1.5")
        #expect(lines?.last == "… and 5 more problems")
    }

    @Test func oneProblemIsItsMessageAlone() {
        let lines = problems(#"{"placements": {"p": {"format": "interstitial", "lines": [{"network": "n"}]}}}"#)
        #expect(lines == ["placements.p.lines[0].placement: required field is missing"])
    }

    @Test func aPlainDecoderStillStopsAtTheFirstProblem() {
        let json = #"{"placements": {"a": {"format": "bogus", "lines": []}, "b": {"format": "bogus", "lines": []}}}"#
        #expect(throws: DecodingError.self) {
            _ = try JSONDecoder().decode(MediationConfiguration.self, from: Data(json.utf8))
        }
    }
}

import AdMediation
import Foundation
import MediationFileFormat
import Testing

/// Issue 47 item 5: a value of the wrong type is named — the value found, bounded — not only its type, so the user
/// sees which value to fix.
@Suite("Mediation configuration: a type mismatch names the value found", .timeLimit(.minutes(1)))
struct TypeMismatchValueTests {
    /// The error's message lines, or nil when the JSON decodes.
    func problems(_ json: String) -> [String]? {
        do {
            _ = try MediationConfiguration.decode(json: Data(json.utf8))
            return nil
        } catch {
            return error.message.split(separator: "\n").map(String.init)
        }
    }

    func line(_ fields: String) -> String {
        #"{"placements": {"p": {"format": "interstitial", "lines": [{"network": "n", "placement": "x", "#
            + fields + "}]}}}"
    }

    @Test func aStringWhereANumberIsExpectedIsNamedWithItsValue() {
        #expect(
            problems(line(#""timeout_ms": "abc""#))
                == [#"placements.p.lines[0].timeout_ms: expected a number, found the string "abc""#])
    }

    @Test func aNumberABooleanAndAnObjectFoundAreNamed() {
        let lines = problems(
            """
            {"placements": {"p": {"format": "interstitial", "ab_label": 12, "mode": true,
              "lines": [{"network": {"id": "n"}, "placement": [1, 2], "ecpm": null}]}}}
            """)
        #expect(
            lines == [
                "placements.p.mode: expected a string, found true",
                "placements.p.lines[0].network: expected a string, found an object",
                "placements.p.lines[0].placement: expected a string, found an array of 2 items",
                "placements.p.ab_label: expected a string, found the number 12",
            ],
            "an explicit null is an absent optional value, not a problem")
    }

    @Test func aLongStringFoundIsShownBoundedAndEscaped() throws {
        // 30 characters, an escape sequence that would clear a terminal, then 200 more: JSON-escaped in the file.
        let long = String(repeating: "a", count: 30) + #"\u001b[2J"# + String(repeating: "b", count: 200)
        let lines = try #require(problems(line(#""floor_ecpm": "\#(long)""#)))
        let message = try #require(lines.first)
        #expect(message.hasPrefix(#"placements.p.lines[0].floor_ecpm: expected a number, found the string "aaa"#))
        #expect(message.hasSuffix(#"…""#), "\(message)")
        #expect(!message.contains("\u{1B}"), "a control character is escaped, never printed: \(message)")
        #expect(message.count < 140, "at most 40 characters of the value: \(message)")
    }
}

import AdapterKit
import AdapterSupport
import Foundation
import Testing

@Suite("JSONWriter")
struct JSONWriterTests {
    private func foundation(_ value: Any) throws -> String {
        String(
            decoding: try JSONSerialization.data(
                withJSONObject: value, options: [.sortedKeys, .withoutEscapingSlashes]),
            as: UTF8.self)
    }

    private func written(_ value: Any) -> String? {
        JSONWriter.data(value).map { String(decoding: $0, as: UTF8.self) }
    }

    @Test func writesTheSameBytesAsFoundationForASandboxAnswer() throws {
        let ad: [String: Any] = [
            "format": "spoc", "url": "https://advertiser.example.com/spoc_7", "block_key": "bk_spoc_7",
            "callbacks": ["click": "http://127.0.0.1:1/mars/v1/t?data=click-spoc_7", "report": "r"],
            "sponsored_by_override": NSNull(), "caps": ["cap_key": "cap_p_7", "day": 3],
            "ranking": ["priority": 1, "item_score": 0.9, "personalization_models": ["m1": 1]],
            "flags": [true, false], "empty": [Any](), "nested": [[String: Any]](),
        ]
        let answer: [String: Any] = ["mock_spoc_1": [ad, ad], "mock_tile_1": [Any]()]
        #expect(written(answer) == (try foundation(answer)))
    }

    @Test func ordersKeysAsFoundationDoes() throws {
        let keys = ["a_", "a1", "ab", "aB", "alpha", "cap_key", "caps", "Zeta", "a", "A", "_x", "x-y", "x.y"]
        let object = Dictionary(uniqueKeysWithValues: keys.enumerated().map { ($1, $0) })
        #expect(written(object) == (try foundation(object)))
    }

    @Test func writesNumbersAsFoundationDoes() throws {
        let numbers: [Any] = [
            1.0, 0.9, 1e-5, 123456789.123, 1e22, 0.1 + 0.2, -0.0, 2.5e-7, 1e16, -3, 0, Int.max, Int.min,
        ]
        #expect(written(numbers) == (try foundation(numbers)))
    }

    @Test func escapesStringsAsFoundationDoes() throws {
        let strings = ["a/b", "quote \" and \\", "line\nfeed\ttab\r\u{8}\u{C}", "\u{1}\u{1F}", "é ✓ 🎉", ""]
        #expect(written(strings) == (try foundation(strings)))
    }

    @Test func keepsBooleansApartFromNumbers() {
        #expect(written([true, 1, false, 0] as [Any]) == "[true,1,false,0]")
    }

    @Test func leavesOtherTypesToFoundation() throws {
        let value: [String: Any] = ["small": Int8(3), "number": NSNumber(value: 2.5)]
        #expect(written(value) == (try foundation(value)))
    }

    @Test func refusesANonFiniteNumber() {
        #expect(written(["x": Double.nan]) == nil)
        #expect(written([Double.infinity]) == nil)
    }
}

@Suite("Hex")
struct HexTests {
    @Test func writesTwoLowerCaseDigitsPerByteAsFormatDoes() {
        let bytes: [UInt8] = [0x00, 0x0F, 0x10, 0x7F, 0xA0, 0xFF, 0x3C]
        #expect(Hex.encode(bytes) == bytes.map { String(format: "%02x", $0) }.joined())
        #expect(Hex.encode([UInt8]()) == "")
    }
}

struct RandomIDTests {
    @Test func aRandomIDIsAVersionFourUUIDInLowerCase() throws {
        let id = RandomID.uuidString()
        let parsed = try #require(UUID(uuidString: id), "\(id) parses as a UUID")
        #expect(parsed.uuidString.lowercased() == id)
        let characters = Array(id)
        #expect(characters[14] == "4")
        #expect("89ab".contains(characters[19]))
    }

    @Test func randomIDsDoNotRepeat() {
        let ids = Set((0..<1000).map { _ in RandomID.uuidString() })
        #expect(ids.count == 1000)
    }

    @Test func aHexTokenHasTwoLowerCaseDigitsPerByte() {
        let token = RandomID.hex(byteCount: 6)
        #expect(token.count == 12)
        #expect(token.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) })
        #expect(RandomID.hex(byteCount: 0) == "")
    }
}

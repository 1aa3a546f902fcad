import AdapterKit
import Foundation
import Testing

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

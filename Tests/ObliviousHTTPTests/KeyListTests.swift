import Foundation
import ObliviousHTTP
import Testing

/// An `application/ohttp-keys` list may offer KEMs this client does not speak before the X25519 one; those are
/// skipped by their length prefix (RFC 9458 §3.2), and only a list with no X25519 configuration, or a malformed one,
/// is refused (issue 31 item 8).
@Suite("OHTTP key lists")
struct KeyListTests {
    /// A DHKEM(P-256, HKDF-SHA256) configuration (KEM 0x0010, a 65-byte public key) with the usual suite.
    static func p256(keyID: UInt8) -> ObliviousHTTPKeyConfiguration {
        ObliviousHTTPKeyConfiguration(
            keyID: keyID, kem: 0x0010, publicKey: Data([0x04] + Array(repeating: 7, count: 64)))
    }

    /// A configuration of a KEM id nobody knows, with a key of an arbitrary size.
    static let unknownKEM = Data([0x00, 0x0e, 5, 0x7f, 0x7f, 1, 2, 3, 4, 5, 0, 4, 0, 1, 0, 1])

    @Test func aListWhoseFirstEntryIsNotX25519YieldsTheX25519EntryThatWorks() throws {
        let gateway = ObliviousHTTPGateway(keyID: 2)
        let list =
            Self.unknownKEM + ObliviousHTTPKeyConfiguration.listEncoded([Self.p256(keyID: 1), gateway.configuration])
        let configurations = try ObliviousHTTPKeyConfiguration.list(decoding: list)
        #expect(configurations == [gateway.configuration])
        let chosen = try #require(configurations.first)
        let request = Data("GET / HTTP/1.1".utf8)
        let (encapsulated, _) = try ObliviousHTTPClient.encapsulate(request, for: chosen)
        #expect(try gateway.decapsulate(encapsulated).request == request)
    }

    @Test func aListWithNoX25519EntryIsRefused() {
        let list = ObliviousHTTPKeyConfiguration.listEncoded([Self.p256(keyID: 1), Self.p256(keyID: 3)])
        do {
            let configurations = try ObliviousHTTPKeyConfiguration.list(decoding: list)
            Issue.record("a list without X25519 was accepted: \(configurations)")
        } catch {
            #expect(error.code == .badKeyConfiguration)
            #expect(error.message.contains("no X25519 key configuration"), "\(error.message)")
        }
    }

    @Test func aMalformedListIsRefusedEvenAfterASkippedEntry() {
        let good = ObliviousHTTPKeyConfiguration.listEncoded([ObliviousHTTPGateway(keyID: 4).configuration])
        let skipped = ObliviousHTTPKeyConfiguration.listEncoded([Self.p256(keyID: 1)])
        for bad in [
            skipped + good.dropLast(1),  // the X25519 entry is cut short
            skipped + Data([0x00, 0x02, 0x01, 0x00]),  // an entry too short for a key id and a KEM id
            skipped.dropLast(1) + good,  // the skipped entry's length runs past its bytes
            skipped + Data([0x00]),  // half a length prefix
        ] {
            do {
                let configurations = try ObliviousHTTPKeyConfiguration.list(decoding: bad)
                Issue.record("\(bad as NSData) was accepted: \(configurations)")
            } catch {
                #expect(error.code == .badKeyConfiguration)
            }
        }
    }
}

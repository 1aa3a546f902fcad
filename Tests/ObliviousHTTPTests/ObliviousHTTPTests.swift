import Foundation
import Testing

@testable import ObliviousHTTP

/// RFC 9458 Appendix A.
enum AppendixA {
    static let privateKey = hex("3c168975674b2fa8e465970b79c8dcf09f1c741626480bd4c6162fc5b6a98e1a")
    static let keyConfiguration = hex(
        "01002031e1f05a740102115220e9af918f738674aec95f54db6e04eb705aae8e79815500080001000100010003")
    static let request = hex("00034745540568747470730b6578616d706c652e636f6d012f")
    static let encapsulatedRequest = hex(
        """
        010020000100014b28f881333e7c164ffc499ad9796f877f4e1051ee6d31bad1
        9dec96c208b4726374e469135906992e1268c594d2a10c695d858c40a026e796
        5e7d86b83dd440b2c0185204b4d63525
        """)
    static let response = hex("0140c8")
    static let exportedSecret = hex("62d87a6ba569ee81014c2641f52bea36")
    static let responseNonce = hex("c789e7151fcba46158ca84b04464910d")
    static let encapsulatedResponse = hex("c789e7151fcba46158ca84b04464910d86f9013e404feea014e7be4a441f234f857fbd")
}

@Suite("Oblivious HTTP (RFC 9458)", .timeLimit(.minutes(1)))
struct ObliviousHTTPTests {
    @Test func parsesTheAppendixKeyConfiguration() throws {
        let configuration = try ObliviousHTTPKeyConfiguration(decoding: AppendixA.keyConfiguration)
        #expect(configuration.keyID == 1 && configuration.kem == 0x0020)
        #expect(configuration.publicKey == hex("31e1f05a740102115220e9af918f738674aec95f54db6e04eb705aae8e798155"))
        #expect(configuration.suites == [.init(kdf: 1, aead: 1), .init(kdf: 1, aead: 3)])
        #expect(configuration.encoded() == AppendixA.keyConfiguration)
    }

    @Test func gatewayDecapsulatesTheAppendixRequestToTheAppendixBinaryRequest() throws {
        let gateway = try ObliviousHTTPGateway(keyID: 1, privateKeyRaw: AppendixA.privateKey)
        #expect(
            gateway.configuration.encoded() == AppendixA.keyConfiguration.prefix(35) + hex("00040001 0001"),
            "the same public key (the gateway offers only the suite it speaks)")
        let (request, context) = try gateway.decapsulate(AppendixA.encapsulatedRequest)
        #expect(request == AppendixA.request)
        #expect(context.exportedSecret == AppendixA.exportedSecret)
    }

    @Test func gatewaySealsTheAppendixResponseByteForByte() throws {
        let gateway = try ObliviousHTTPGateway(keyID: 1, privateKeyRaw: AppendixA.privateKey)
        let (_, context) = try gateway.decapsulate(AppendixA.encapsulatedRequest)
        #expect(
            try context.encapsulate(AppendixA.response, responseNonce: AppendixA.responseNonce)
                == AppendixA.encapsulatedResponse)
    }

    @Test func clientOpensTheAppendixResponse() throws {
        // The client's context for the Appendix request, rebuilt from the secret both sides export.
        let gateway = try ObliviousHTTPGateway(keyID: 1, privateKeyRaw: AppendixA.privateKey)
        let (_, gatewayContext) = try gateway.decapsulate(AppendixA.encapsulatedRequest)
        let client = ObliviousHTTPResponseContext(
            secret: gatewayContext.secret, encapsulatedKey: gatewayContext.encapsulatedKey)
        #expect(try client.decapsulate(AppendixA.encapsulatedResponse) == AppendixA.response)
    }

    @Test(arguments: [0, 1, 64 << 10])
    func requestAndResponseRoundTripBetweenClientAndGateway(size: Int) throws {
        let gateway = ObliviousHTTPGateway(keyID: 7)
        let content = Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let request = BinaryHTTPRequest(
            method: "POST", scheme: "https", authority: "ads.example", path: "/v1/ads", content: content)
        let (encapsulated, clientContext) = try ObliviousHTTPClient.encapsulate(
            request.encoded(), for: gateway.configuration)
        #expect(!encapsulated.contains(Data("/v1/ads".utf8)), "the relay sees no plaintext path")
        if content.count >= 16 {
            #expect(!encapsulated.contains(content.prefix(64)), "the relay sees no plaintext content")
        }
        let (opened, gatewayContext) = try gateway.decapsulate(encapsulated)
        #expect(try BinaryHTTPRequest(decoding: opened) == request)
        let response = BinaryHTTPResponse(status: 200, content: content)
        let sealed = try gatewayContext.encapsulate(response.encoded())
        #expect(try BinaryHTTPResponse(decoding: clientContext.decapsulate(sealed)) == response)
    }

    @Test func requestUnderAnotherKeyIDIsUnknownKey() throws {
        let old = ObliviousHTTPGateway(keyID: 1), new = ObliviousHTTPGateway(keyID: 2)
        let (encapsulated, _) = try ObliviousHTTPClient.encapsulate(AppendixA.request, for: old.configuration)
        #expect(throws: ObliviousHTTPError.self) { try new.decapsulate(encapsulated) }
        do { _ = try new.decapsulate(encapsulated) } catch { #expect(error.code == .unknownKey) }
    }

    @Test func alteredRequestFailsToDecrypt() throws {
        let gateway = ObliviousHTTPGateway(keyID: 3)
        var (encapsulated, _) = try ObliviousHTTPClient.encapsulate(AppendixA.request, for: gateway.configuration)
        encapsulated[encapsulated.count - 1] ^= 1
        do {
            _ = try gateway.decapsulate(encapsulated)
            Issue.record("an altered request decrypted")
        } catch { #expect(error.code == .decryptionFailed) }
    }

    @Test func alteredResponseOrAResponseToAnotherRequestFailsToDecrypt() throws {
        let gateway = ObliviousHTTPGateway(keyID: 3)
        let (first, firstContext) = try ObliviousHTTPClient.encapsulate(AppendixA.request, for: gateway.configuration)
        let (second, _) = try ObliviousHTTPClient.encapsulate(AppendixA.request, for: gateway.configuration)
        let toSecond = try gateway.decapsulate(second).context.encapsulate(AppendixA.response)
        do {
            _ = try firstContext.decapsulate(toSecond)
            Issue.record("a response to another request decrypted")
        } catch { #expect(error.code == .decryptionFailed) }
        var toFirst = try gateway.decapsulate(first).context.encapsulate(AppendixA.response)
        #expect(try firstContext.decapsulate(toFirst) == AppendixA.response)
        toFirst[20] ^= 0x80
        do {
            _ = try firstContext.decapsulate(toFirst)
            Issue.record("an altered response decrypted")
        } catch { #expect(error.code == .decryptionFailed) }
    }

    @Test func keyListRoundTripsAndRefusesMalformedConfigurations() throws {
        let gateway = ObliviousHTTPGateway(keyID: 9)
        let list = ObliviousHTTPKeyConfiguration.listEncoded([gateway.configuration])
        #expect(try ObliviousHTTPKeyConfiguration.list(decoding: list) == [gateway.configuration])
        for bad in [
            Data(), list.dropLast(1), hex("0003 010020"),
            hex("002b") + AppendixA.keyConfiguration.prefix(39) + hex("0003 000100"),
        ] {
            do {
                _ = try ObliviousHTTPKeyConfiguration.list(decoding: bad)
                Issue.record("\(bad as NSData) was accepted")
            } catch {
                #expect(error.code == .badKeyConfiguration)
            }
        }
    }

    @Test func configurationWithoutTheSupportedSuiteIsRefusedByTheClient() throws {
        var configuration = ObliviousHTTPGateway(keyID: 4).configuration
        configuration.suites = [.init(kdf: 1, aead: 3)]
        do {
            _ = try ObliviousHTTPClient.encapsulate(AppendixA.request, for: configuration)
            Issue.record("accepted")
        } catch {
            #expect(error.code == .badKeyConfiguration)
        }
    }
}

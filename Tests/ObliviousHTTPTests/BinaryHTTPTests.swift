import Foundation
import Testing

@testable import ObliviousHTTP

func hex(_ text: String) -> Data {
    let digits = Array(text.filter { !$0.isWhitespace })
    var data = Data()
    var index = 0
    while index + 1 < digits.count {
        data.append(UInt8(String(digits[index...index + 1]), radix: 16) ?? 0)
        index += 2
    }
    return data
}

@Suite("Binary HTTP (RFC 9292)", .timeLimit(.minutes(1)))
struct BinaryHTTPTests {
    /// RFC 9292 §5, "Known-Length Binary Encoding of Request".
    static let rfcRequest = hex(
        """
        00034745 54056874 74707300 0a2f6865 6c6c6f2e 74787440 6c0a7573 65722d61 67656e74 34637572 6c2f372e 31362e33
        206c6962 6375726c 2f372e31 362e3320 4f70656e 53534c2f 302e392e 376c207a 6c69622f 312e322e 3304686f 73740f77
        77772e65 78616d70 6c652e63 6f6d0f61 63636570 742d6c61 6e677561 67650665 6e2c206d 690000
        """)
    static let rfcRequestValue = BinaryHTTPRequest(
        method: "GET", scheme: "https", authority: "", path: "/hello.txt",
        headers: [
            .init("user-agent", "curl/7.16.3 libcurl/7.16.3 OpenSSL/0.9.7l zlib/1.2.3"),
            .init("host", "www.example.com"),
            .init("accept-language", "en, mi"),
        ])

    @Test func decodesTheRFCKnownLengthRequest() throws {
        #expect(try BinaryHTTPRequest(decoding: Self.rfcRequest) == Self.rfcRequestValue)
    }

    @Test func encodesTheRFCKnownLengthRequestByteForByte() {
        #expect(Self.rfcRequestValue.encoded() == Self.rfcRequest)
    }

    @Test func truncatedAndPaddedFormsMeanTheSameRequest() throws {
        #expect(
            try BinaryHTTPRequest(decoding: Self.rfcRequest.dropLast(2)) == Self.rfcRequestValue,
            "content and trailers truncated")
        #expect(
            try BinaryHTTPRequest(decoding: Self.rfcRequest + Data(count: 10)) == Self.rfcRequestValue,
            "ten bytes of padding")
    }

    /// RFC 9292 §5, "Known-Length Encoding of Response" (the chunked example, with a trailer).
    @Test func decodesAndEncodesTheRFCKnownLengthResponse() throws {
        let bytes = hex(
            ("0140c800 1d546869 7320636f 6e74656e 7420636f 6e746169 "
                + "6e732043 524c462e 0d0a0d07 74726169 6c657204 74657874")
        )
        let expected = BinaryHTTPResponse(
            status: 200, content: Data("This content contains CRLF.\r\n".utf8), trailers: [.init("trailer", "text")])
        #expect(try BinaryHTTPResponse(decoding: bytes) == expected)
        #expect(expected.encoded() == bytes)
    }

    /// RFC 9458 Appendix A's request and response are binary HTTP messages too.
    @Test func decodesTheOHTTPAppendixMessages() throws {
        let request = try BinaryHTTPRequest(decoding: hex("00034745540568747470730b6578616d706c652e636f6d012f"))
        #expect(request == BinaryHTTPRequest(method: "GET", scheme: "https", authority: "example.com", path: "/"))
        #expect(try BinaryHTTPResponse(decoding: hex("0140c8")).status == 200)
    }

    @Test func informationalResponsesRoundTrip() throws {
        let response = BinaryHTTPResponse(
            status: 204, headers: [.init("x-a", "1")],
            informational: [.init(status: 103, headers: [.init("link", "</s.css>")])])
        #expect(try BinaryHTTPResponse(decoding: response.encoded()) == response)
    }

    @Test func largeContentUsesLongVarintsAndRoundTrips() throws {
        let content = Data((0..<70_000).map { UInt8(truncatingIfNeeded: $0) })
        let request = BinaryHTTPRequest(method: "POST", scheme: "https", authority: "a", path: "/p", content: content)
        #expect(try BinaryHTTPRequest(decoding: request.encoded()) == request)
    }

    @Test(arguments: [
        ("00034745", "a method that runs past the end"),
        ("0003474554ff", "a varint that runs past the end"),
        ("0140c80005", "a header section longer than the message"),
        ("0140c8000001", "non-zero bytes after the message"),
        ("0140c801020001", "an upper-case or empty field name"),
        ("01402c", "a status that is not 100…599"),
        ("05", "an unknown framing indicator"),
    ])
    func malformedMessagesAreRefusedNamingWhatIsWrong(bytes: String, why: String) {
        let data = hex(bytes)
        let request = (try? BinaryHTTPRequest(decoding: data)) != nil
        let response = (try? BinaryHTTPResponse(decoding: data)) != nil
        #expect(!request && !response, "\(why) must be refused")
    }

    @Test func indefiniteLengthIsRefusedAsUnsupported() {
        #expect(
            throws: ObliviousHTTPError(.unsupportedFraming, "framing indicator 2 is not a known-length request (0)")
        ) {
            try BinaryHTTPRequest(decoding: hex("02034745540568747470730000"))
        }
    }
}

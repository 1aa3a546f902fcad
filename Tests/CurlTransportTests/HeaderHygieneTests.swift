import AdMediation
import AdMediationTesting
import AdTransport
import CurlTransport
import Foundation
import TestSupport
import Testing

@Suite("Header hygiene", .timeLimit(.minutes(2)))
struct HeaderHygieneTests {
    @Test(arguments: TransportKind.allCases, ["a\r\nX-Injected: 1", "a\nb", "a\rb", "a\u{0}b", "a\u{7F}b", "a\u{1B}b"])
    func aHeaderValueWithAControlCharacterIsRefusedAndNothingIsSent(kind: TransportKind, value: String) async throws {
        try await withServer(kind, .init(), echo) { server, client in
            let error = await transportError {
                try await client.send(HTTPRequest(url: server.baseURL + "/", headers: ["X-Test": value]))
            }
            #expect(error?.code == .invalidHeader)
            #expect(error?.message.contains(value) == false, "the message does not echo the value")
            #expect(server.requestsReceived == 0)
            #expect(client.requestsHoldingResources == 0, "the handle made for the request was freed")
        }
    }

    @Test(arguments: TransportKind.allCases, ["", "X Test", "X-Test:", "X\r\nInjected", "Ünicode", "(comment)"])
    func aHeaderNameThatIsNotATokenIsRefused(kind: TransportKind, name: String) async throws {
        try await withServer(kind, .init(), echo) { server, client in
            let error = await transportError {
                try await client.send(HTTPRequest(url: server.baseURL + "/", headers: HTTPHeaders([(name, "v")])))
            }
            #expect(error?.code == .invalidHeader)
            #expect(server.requestsReceived == 0)
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aTabInAValueAndEveryTokenCharacterInANameAreAllowed(kind: TransportKind) async throws {
        try await withServer(kind, .init(), echo) { server, client in
            let response = try await client.send(
                HTTPRequest(url: server.baseURL + "/", headers: ["X-A!#$%&'*+.^_`|~9": "a\tb"]))
            #expect(response.headers["X-Seen-X-A!#$%&'*+.^_`|~9"] == "a\tb")
        }
    }

    @Test func anInvalidHeaderMapsToAConfigurationError() {
        #expect(AdError(HTTPClientError(.invalidHeader, "x")).code == .configuration)
    }
}

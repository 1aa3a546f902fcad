import AdMediation
import AdMediationTesting
import AdTransport
import CurlTransport
import Foundation
import TestSupport
import Testing

/// Issue 31 item 8, the transport's part: a server's bad status line is the server's fault, not the app's
/// configuration; a caller's huge deadline means "very far", not "already past".
@Suite("Transport: malformed status lines and huge deadlines", .timeLimit(.minutes(1)))
struct SmallerItemsTests {
    @Test(
        arguments: TransportKind.allCases,
        [
            "HTTP/9.9 200 OK\r\nContent-Length: 2\r\n\r\nok",
            "HTTP/1.1 abc Weird\r\nContent-Length: 2\r\n\r\nok",
            "HTTP/1.1 20 Short\r\nContent-Length: 2\r\n\r\nok",
        ])
    func aMalformedStatusLineIsAnInvalidResponseNotAConfigurationError(kind: TransportKind, reply: String) async throws
    {
        let bytes = Array(reply.utf8)
        let server = try LoopbackHTTPServer { _ in .raw(bytes) }
        defer { server.stop() }
        let client = kind.make()
        let error = await transportError { try await client.send(HTTPRequest(url: server.baseURL + "/")) }
        await client.shutdown()
        #expect(error?.code == .invalidResponse, "\(reply.debugDescription): \(String(describing: error))")
        if let error { #expect(AdError(error).code == .invalidResponse) }
    }

    @Test(
        arguments: TransportKind.allCases,
        [Duration.seconds(Int64.max), .seconds(Int64.max / 2), .milliseconds(Int64.max)])
    func aHugeCallerDeadlineIsVeryFarNotAlreadyPast(kind: TransportKind, timeout: Duration) async throws {
        try await withServer(kind, .init(), { _ in .respond(.text("ok")) }) { server, client in
            let response = try await client.send(HTTPRequest(url: server.baseURL + "/", timeout: timeout))
            #expect(response.status == 200)
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aHugeDefaultDeadlineIsVeryFarNotAlreadyPast(kind: TransportKind) async throws {
        try await withServer(kind, .init(defaultTimeout: .seconds(Int64.max)), { _ in .respond(.text("ok")) }) {
            server, client in
            let response = try await client.send(HTTPRequest(url: server.baseURL + "/"))
            #expect(response.status == 200)
        }
    }
}

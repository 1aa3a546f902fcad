import AdMediation
import AdMediationTesting
import CurlTransport
import Foundation
import TestSupport
import Testing

@Suite("Transport failures have distinct codes", .timeLimit(.minutes(2)))
struct FailureTests {
    @Test func refusedConnection() async throws {
        let port = try LoopbackHTTPServer.refusingPort()
        let client = CurlHTTPClient()
        let error = await transportError { try await client.send(HTTPRequest(url: "http://127.0.0.1:\(port)/")) }
        #expect(error?.code == .connectionRefused)
        await client.shutdown()
    }

    @Test func unresolvableHost() async throws {
        let client = CurlHTTPClient()
        let error = await transportError {
            try await client.send(HTTPRequest(url: "https://no-such-host.invalid/", timeout: .seconds(10)))
        }
        #expect(error?.code == .hostNotFound)
        await client.shutdown()
    }

    @Test func resetMidBody() async throws {
        let body = [UInt8](repeating: 0x42, count: 200_000)
        try await withServer({ _ in .resetMidBody(.init(body: body), afterBytes: 1000) }) { server, client in
            let error = await transportError { try await client.send(HTTPRequest(url: server.baseURL)) }
            #expect(error?.code == .connectionReset)
        }
    }

    @Test func truncatedBody() async throws {
        let body = [UInt8](repeating: 0x42, count: 10_000)
        try await withServer({ _ in .truncate(.init(body: body), afterBytes: 5000) }) { server, client in
            let error = await transportError { try await client.send(HTTPRequest(url: server.baseURL)) }
            #expect(error?.code == .truncatedBody)
        }
    }

    @Test func closedWithoutResponse() async throws {
        try await withServer({ _ in .closeWithoutResponse }) { server, client in
            let error = await transportError { try await client.send(HTTPRequest(url: server.baseURL)) }
            #expect(error?.code == .emptyResponse)
        }
    }

    @Test func timeout() async throws {
        try await withServer({ _ in .respond(.text("late", delay: .seconds(3))) }) { server, client in
            let error = await transportError {
                try await client.send(HTTPRequest(url: server.baseURL, timeout: .milliseconds(200)))
            }
            #expect(error?.code == .timeout)
        }
    }

    @Test func responseLargerThanTheCapWithContentLength() async throws {
        var configuration = CurlHTTPClient.Configuration()
        configuration.maxResponseBytes = 64 << 10
        let body = [UInt8](repeating: 1, count: 65 << 10)
        try await withServer(configuration: configuration, { _ in .respond(.init(body: body)) }) { server, client in
            let error = await transportError { try await client.send(HTTPRequest(url: server.baseURL)) }
            #expect(error?.code == .responseTooLarge)
        }
    }

    @Test func streamedResponseIsCutOffAtTheCap() async throws {
        // No Content-Length: the write callback must stop buffering at the cap, not after the whole body.
        var configuration = CurlHTTPClient.Configuration()
        configuration.maxResponseBytes = 64 << 10
        let body = [UInt8](repeating: 1, count: 4 << 20)
        try await withServer(configuration: configuration, { _ in .respond(.init(body: body, closeDelimited: true)) }) {
            server, client in
            let error = await transportError { try await client.send(HTTPRequest(url: server.baseURL)) }
            #expect(error?.code == .responseTooLarge)
            #expect(error?.message.contains("65536") == true)
        }
    }

    @Test func defaultCapIsEightMebibytes() {
        #expect(CurlHTTPClient.Configuration().maxResponseBytes == 8 * 1024 * 1024)
    }

    @Test func tooManyRedirects() async throws {
        try await withServer({ request in
            let n = Int(request.path.dropFirst()) ?? 0
            return .respond(.init(status: 302, headers: [("Location", "/\(n + 1)")]))
        }) { server, client in
            let error = await transportError { try await client.send(HTTPRequest(url: server.baseURL + "/0")) }
            #expect(error?.code == .tooManyRedirects)
        }
    }

    @Test func malformedURLIsRejected() async throws {
        let client = CurlHTTPClient()
        let error = await transportError { try await client.send(HTTPRequest(url: "not a url")) }
        #expect(error?.code == .invalidURL)
        await client.shutdown()
    }
}

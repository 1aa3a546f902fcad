import AdMediation
import AdMediationTesting
import AdTransport
import CurlTransport
import Foundation
import TestSupport
import Testing

@Suite("Transport failures have distinct codes", .timeLimit(.minutes(2)))
struct FailureTests {
    @Test(arguments: TransportKind.allCases)
    func refusedConnection(kind: TransportKind) async throws {
        let port = try LoopbackHTTPServer.refusingPort()
        let client = kind.make()
        let error = await transportError { try await client.send(HTTPRequest(url: "http://127.0.0.1:\(port)/")) }
        #expect(error?.code == .connectionRefused)
        await client.shutdown()
    }

    @Test(arguments: TransportKind.allCases)
    func unresolvableHost(kind: TransportKind) async throws {
        let client = kind.make()
        let error = await transportError {
            try await client.send(HTTPRequest(url: "https://no-such-host.invalid/", timeout: .seconds(10)))
        }
        #expect(error?.code == .hostNotFound)
        await client.shutdown()
    }

    @Test(arguments: TransportKind.allCases)
    func resetMidBody(kind: TransportKind) async throws {
        let body = [UInt8](repeating: 0x42, count: 200_000)
        try await withServer(kind, .init(), { _ in .resetMidBody(.init(body: body), afterBytes: 1000) }) {
            server, client in
            let error = await transportError { try await client.send(HTTPRequest(url: server.baseURL)) }
            #expect(error?.code == .connectionReset)
        }
    }

    @Test(arguments: TransportKind.allCases)
    func truncatedBody(kind: TransportKind) async throws {
        let body = [UInt8](repeating: 0x42, count: 10_000)
        try await withServer(kind, .init(), { _ in .truncate(.init(body: body), afterBytes: 5000) }) { server, client in
            let error = await transportError { try await client.send(HTTPRequest(url: server.baseURL)) }
            #expect(error?.code == .truncatedBody)
        }
    }

    @Test(arguments: TransportKind.allCases)
    func closedWithoutResponse(kind: TransportKind) async throws {
        try await withServer(kind, .init(), { _ in .closeWithoutResponse }) { server, client in
            let error = await transportError { try await client.send(HTTPRequest(url: server.baseURL)) }
            #expect(error?.code == .emptyResponse)
        }
    }

    @Test(arguments: TransportKind.allCases)
    func timeout(kind: TransportKind) async throws {
        try await withServer(kind, .init(), { _ in .respond(.text("late", delay: .seconds(3))) }) { server, client in
            let error = await transportError {
                try await client.send(HTTPRequest(url: server.baseURL, timeout: .milliseconds(200)))
            }
            #expect(error?.code == .timeout)
        }
    }

    @Test(arguments: TransportKind.allCases)
    func responseLargerThanTheCapWithContentLength(kind: TransportKind) async throws {
        let body = [UInt8](repeating: 1, count: 65 << 10)
        try await withServer(kind, .init(maxResponseBytes: 64 << 10), { _ in .respond(.init(body: body)) }) {
            server, client in
            let error = await transportError { try await client.send(HTTPRequest(url: server.baseURL)) }
            #expect(error?.code == .responseTooLarge)
        }
    }

    @Test(arguments: TransportKind.allCases)
    func streamedResponseIsCutOffAtTheCap(kind: TransportKind) async throws {
        // No Content-Length: the write callback must stop buffering at the cap, not after the whole body.
        let body = [UInt8](repeating: 1, count: 4 << 20)
        try await withServer(
            kind, .init(maxResponseBytes: 64 << 10), { _ in .respond(.init(body: body, closeDelimited: true)) }
        ) { server, client in
            let error = await transportError { try await client.send(HTTPRequest(url: server.baseURL)) }
            #expect(error?.code == .responseTooLarge)
            #expect(error?.message.contains("65536") == true)
        }
    }

    @Test(arguments: TransportKind.allCases)
    func defaultCapIsEightMebibytes(kind: TransportKind) {
        #expect(kind.defaultMaxResponseBytes == 8 * 1024 * 1024)
    }

    @Test(arguments: TransportKind.allCases)
    func tooManyRedirects(kind: TransportKind) async throws {
        try await withServer(
            kind, .init(),
            { request in
                let n = Int(request.path.dropFirst()) ?? 0
                return .respond(.init(status: 302, headers: [("Location", "/\(n + 1)")]))
            }
        ) { server, client in
            let error = await transportError { try await client.send(HTTPRequest(url: server.baseURL + "/0")) }
            #expect(error?.code == .tooManyRedirects)
        }
    }

    @Test(arguments: TransportKind.allCases)
    func malformedURLIsRejected(kind: TransportKind) async throws {
        let client = kind.make()
        let error = await transportError { try await client.send(HTTPRequest(url: "not a url")) }
        #expect(error?.code == .invalidURL)
        await client.shutdown()
    }
}

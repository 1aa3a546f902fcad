import AdMediation
import AdMediationTesting
import AdTransport
import CurlTransport
import Foundation
import TestSupport
import Testing

/// Easy handles are reset and reused across requests; nothing of one request may reach the next.
@Suite("Easy handle reuse", .timeLimit(.minutes(1)))
struct HandleReuseTests {
    @Test func aFinishedRequestsHandleIsKeptForTheNextAndFreedAtShutdown() async throws {
        let server = try LoopbackHTTPServer { _ in .respond(.text("ok")) }
        defer { server.stop() }
        let client = CurlHTTPClient()
        _ = try await client.send(HTTPRequest(url: server.baseURL))
        #expect(client.statistics.idleHandles == 1)
        #expect(client.statistics.liveHandles == 0)
        _ = try await client.send(HTTPRequest(url: server.baseURL))
        #expect(client.statistics.idleHandles == 1, "the second request took the kept handle")
        await client.shutdown()
        #expect(client.statistics.idleHandles == 0)
    }

    @Test func aReusedHandleSendsNoMethodBodyOrHeaderOfTheRequestBefore() async throws {
        try await withServer(echo) { server, client in
            _ = try await client.send(
                HTTPRequest(
                    method: .put, url: server.baseURL + "/first", headers: ["X-Only-First": "1"],
                    body: Data("first body".utf8)))
            #expect(client.statistics.idleHandles == 1)
            let second = try await client.send(HTTPRequest(url: server.baseURL + "/second"))
            #expect(second.headers["X-Method"] == "GET")
            #expect(second.headers["X-Target"] == "/second")
            #expect(second.headers["X-Seen-X-Only-First"] == nil)
            #expect(second.body.isEmpty)
        }
    }

    @Test func aGetAfterAHeadOnTheSameHandleReceivesItsBody() async throws {
        try await withServer({ _ in .respond(.text("the body")) }) { server, client in
            let head = try await client.send(HTTPRequest(method: .head, url: server.baseURL))
            #expect(head.body.isEmpty)
            let get = try await client.send(HTTPRequest(url: server.baseURL))
            #expect(String(decoding: get.body, as: UTF8.self) == "the body")
        }
    }

    @Test func aRequestAfterAFailedOneOnTheSameHandleSucceedsWithItsOwnBody() async throws {
        var configuration = CurlHTTPClient.Configuration()
        configuration.maxResponseBytes = 16
        try await withServer(
            configuration: configuration,
            { request in
                .respond(.text(request.target == "/big" ? String(repeating: "x", count: 64) : "small"))
            }
        ) { server, client in
            let error = await transportError { try await client.send(HTTPRequest(url: server.baseURL + "/big")) }
            #expect(error?.code == .responseTooLarge)
            let next = try await client.send(HTTPRequest(url: server.baseURL + "/small"))
            #expect(String(decoding: next.body, as: UTF8.self) == "small")
        }
    }

    @Test func atMostSixtyFourHandlesAreKept() async throws {
        try await withServer({ _ in .respond(.text("ok", delay: .milliseconds(200))) }) { server, client in
            try await withThrowingTaskGroup(of: Int.self) { group in
                for i in 0..<80 {
                    group.addTask {
                        try await client.send(HTTPRequest(url: server.baseURL + "/\(i)", timeout: .seconds(20))).status
                    }
                }
                for try await status in group { #expect(status == 200) }
            }
            #expect(client.statistics.idleHandles == 64)
        }
    }
}

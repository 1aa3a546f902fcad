import AdMediation
import AdMediationServices
import AdMediationTesting
import AdTransport
import CurlTransport
import Foundation
import Logging
import ServiceLifecycle
import Testing

/// The client's lifetime: nothing starts in `init`; `shutdown()` ends it; as a `Service` it ends with its group.
@Suite("Curl client lifetime", .timeLimit(.minutes(1)))
struct CurlLifetimeTests {
    @Test("constructing a client starts no engine thread: the first request does, and shutdown ends it")
    func theFirstRequestStartsTheEngine() async throws {
        let server = try LoopbackHTTPServer { _ in .respond(.text("ok")) }
        defer { server.stop() }
        let client = CurlHTTPClient()
        #expect(!client.statistics.engineRunning, "init started the engine thread")
        let response = try await client.send(HTTPRequest(url: server.baseURL))
        #expect(response.status == 200)
        #expect(client.statistics.engineRunning)
        await client.shutdown()
        #expect(!client.statistics.engineRunning)
    }

    @Test("a client shut down before its first request refuses requests with cancelled and sends nothing")
    func shutdownBeforeTheFirstRequest() async throws {
        let server = try LoopbackHTTPServer { _ in .respond(.text("ok")) }
        defer { server.stop() }
        let client = CurlHTTPClient()
        await client.shutdown()
        do {
            _ = try await client.send(HTTPRequest(url: server.baseURL))
            Issue.record("a request after the shutdown was sent")
        } catch let error as HTTPClientError {
            #expect(error.code == .cancelled)
        }
        #expect(server.requestsReceived == 0)
        #expect(!client.statistics.engineRunning)
    }

    @Test("run as a Service, the client works while its group runs and is shut down by the group's graceful shutdown")
    func aServiceGroupEndsTheClient() async throws {
        let server = try LoopbackHTTPServer { _ in .respond(.text("ok")) }
        defer { server.stop() }
        let client = CurlHTTPClient()
        let group = ServiceGroup(services: [BackgroundWorkService(client)], logger: Logger(label: "test"))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            let response = try await client.send(HTTPRequest(url: server.baseURL))
            #expect(response.status == 200)
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
        #expect(!client.statistics.engineRunning)
        do {
            _ = try await client.send(HTTPRequest(url: server.baseURL))
            Issue.record("a request after the group's shutdown was sent")
        } catch let error as HTTPClientError {
            #expect(error.code == .cancelled)
        }
    }
}

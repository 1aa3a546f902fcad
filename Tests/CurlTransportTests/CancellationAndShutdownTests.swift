import AdMediation
import AdMediationTesting
import AdTransport
import CurlTransport
import Foundation
import TestSupport
import Testing
import URLSessionTransport

/// Cancellation and shutdown (their wall-clock bounds are in the TimingTests target).
@Suite("Cancellation and shutdown", .timeLimit(.minutes(1)))
struct CancellationAndShutdownTests {
    @Test(arguments: TransportKind.allCases)
    func alreadyCancelledTaskSendsNothing(kind: TransportKind) async throws {
        try await withServer(kind, .init(), { _ in .respond(.text("ok")) }) { server, client in
            let task = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                return try await client.send(HTTPRequest(url: server.baseURL))
            }
            let error = await transportError { try await task.value }
            #expect(error?.code == .cancelled)
            #expect(server.requestsReceived == 0)
            #expect(client.requestsHoldingResources == 0)
        }
    }

    @Test(arguments: TransportKind.allCases)
    func shutdownFailsInFlightRequestsWithCancellationAndLeaksNoHandle(kind: TransportKind) async throws {
        let server = try LoopbackHTTPServer { _ in .respond(.text("never", delay: .seconds(5))) }
        defer { server.stop() }
        let client = kind.make(.init(maxConnectionsPerHost: 16))  // all 8 in flight at once
        let tasks = (0..<8).map { i in
            Task { try await client.send(HTTPRequest(url: server.baseURL + "/\(i)", timeout: .seconds(10))) }
        }
        while server.requestsReceived < 8 { try await Task.sleep(for: .milliseconds(2)) }
        #expect(client.requestsHoldingResources == 8)
        await client.shutdown()
        for task in tasks {
            let error = await transportError { try await task.value }
            #expect(error?.code == .cancelled)
        }
        #expect(client.requestsHoldingResources == 0)
    }

    @Test(arguments: TransportKind.allCases)
    func requestsAfterShutdownFailWithCancellation(kind: TransportKind) async throws {
        let server = try LoopbackHTTPServer { _ in .respond(.text("ok")) }
        defer { server.stop() }
        let client = kind.make()
        await client.shutdown()
        let error = await transportError { try await client.send(HTTPRequest(url: server.baseURL)) }
        #expect(error?.code == .cancelled)
        #expect(server.requestsReceived == 0)
        #expect(client.requestsHoldingResources == 0)
    }
}

@Suite("Scoped lifetimes", .timeLimit(.minutes(1)))
struct ScopedLifetimeTests {
    @Test func withCurlHTTPClientShutsTheClientDownWhenTheScopeEnds() async throws {
        try await withServer({ _ in .respond(.text("ok")) }) { server, _ in
            let escaped = try await withCurlHTTPClient { http in
                let status = try await http.send(HTTPRequest(url: server.baseURL)).status
                #expect(status == 200)
                return http
            }
            let error = await transportError { try await escaped.send(HTTPRequest(url: server.baseURL)) }
            #expect(error?.code == .cancelled, "a client used after its scope is shut down")
            #expect(escaped.statistics.liveHandles == 0)
        }
    }

    @Test func withCurlHTTPClientShutsDownWhenTheBodyThrows() async throws {
        struct Failure: Error {}
        var escaped: CurlHTTPClient?
        await #expect(throws: Failure.self) {
            try await withCurlHTTPClient { http in
                escaped = http
                throw Failure()
            }
        }
        let error = await transportError { try await #require(escaped).send(HTTPRequest(url: "http://127.0.0.1:1/")) }
        #expect(error?.code == .cancelled)
    }

    @Test func withURLSessionHTTPClientShutsTheClientDownWhenTheScopeEnds() async throws {
        try await withServer({ _ in .respond(.text("ok")) }) { server, _ in
            let escaped = try await withURLSessionHTTPClient { http in
                let status = try await http.send(HTTPRequest(url: server.baseURL)).status
                #expect(status == 200)
                return http
            }
            let error = await transportError { try await escaped.send(HTTPRequest(url: server.baseURL)) }
            #expect(error?.code == .cancelled, "a client used after its scope is shut down")
            #expect(escaped.activeTransfers == 0)
        }
    }
}

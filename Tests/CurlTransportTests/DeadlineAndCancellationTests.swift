import AdMediation
import CurlTransport
import Foundation
import LoopbackServer
import Testing

/// Timing assertions run one at a time so they do not compete with each other for the two cores.
@Suite("Deadlines and cancellation", .serialized)
struct DeadlineAndCancellationTests {
    @Test(arguments: [100, 300, 1500])
    func timeoutFiresWithinTwentyMilliseconds(timeoutMs: Int) async throws {
        try await withServer({ _ in .respond(.text("late", delay: .seconds(5))) }) { server, client in
            // Warm the connection so the measurement covers the deadline, not the connect.
            _ = try? await client.send(HTTPRequest(url: server.baseURL, timeout: .milliseconds(1)))
            let (error, ms) = await measureMs {
                await transportError { try await client.send(HTTPRequest(url: server.baseURL, timeout: .milliseconds(timeoutMs))) }
            }
            #expect(error?.code == .timeout)
            #expect(abs(ms - Double(timeoutMs)) <= 20, "timed out after \(ms) ms, wanted \(timeoutMs) ± 20")
        }
    }

    @Test func requestQueuedBehindConnectionLimitStillTimesOut() async throws {
        var configuration = CurlHTTPClient.Configuration()
        configuration.maxConnectionsPerHost = 1
        try await withServer(configuration: configuration, { request in
            .respond(.text("slow", delay: request.path == "/slow" ? .seconds(2) : .zero))
        }) { server, client in
            let blocker = Task { try await client.send(HTTPRequest(url: server.baseURL + "/slow", timeout: .seconds(5))) }
            // Give the blocker the only connection first.
            while server.requestsReceived == 0 { try await Task.sleep(for: .milliseconds(2)) }
            let (error, ms) = await measureMs {
                await transportError { try await client.send(HTTPRequest(url: server.baseURL + "/queued", timeout: .milliseconds(300))) }
            }
            #expect(error?.code == .timeout)
            #expect(abs(ms - 300) <= 20, "queued request timed out after \(ms) ms, wanted 300 ± 20")
            _ = try await blocker.value
        }
    }

    @Test func cancellationAbortsTheTransferAndFreesItsHandle() async throws {
        try await withServer({ _ in .respond(.text("never", delay: .seconds(5))) }) { server, client in
            let task = Task { try await client.send(HTTPRequest(url: server.baseURL, timeout: .seconds(10))) }
            while server.requestsReceived == 0 { try await Task.sleep(for: .milliseconds(2)) }
            let (error, ms) = await measureMs { () async -> HTTPClientError? in
                task.cancel()
                return await transportError { try await task.value }
            }
            #expect(error?.code == .cancelled)
            #expect(ms < 50, "cancellation took \(ms) ms")
            #expect(client.statistics.liveHandles == 0)
            #expect(client.statistics.activeTransfers == 0)
        }
    }

    @Test func alreadyCancelledTaskSendsNothing() async throws {
        try await withServer({ _ in .respond(.text("ok")) }) { server, client in
            let task = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                return try await client.send(HTTPRequest(url: server.baseURL))
            }
            let error = await transportError { try await task.value }
            #expect(error?.code == .cancelled)
            #expect(server.requestsReceived == 0)
            #expect(client.statistics.liveHandles == 0)
        }
    }

    @Test func shutdownFailsInFlightRequestsWithCancellationAndLeaksNoHandle() async throws {
        let server = try LoopbackHTTPServer { _ in .respond(.text("never", delay: .seconds(5))) }
        defer { server.stop() }
        let client = CurlHTTPClient()
        let tasks = (0..<8).map { i in
            Task { try await client.send(HTTPRequest(url: server.baseURL + "/\(i)", timeout: .seconds(10))) }
        }
        while server.requestsReceived < 8 { try await Task.sleep(for: .milliseconds(2)) }
        #expect(client.statistics.liveHandles == 8)
        await client.shutdown()
        for task in tasks {
            let error = await transportError { try await task.value }
            #expect(error?.code == .cancelled)
        }
        #expect(client.statistics.liveHandles == 0)
    }

    @Test func requestsAfterShutdownFailWithCancellation() async throws {
        let server = try LoopbackHTTPServer { _ in .respond(.text("ok")) }
        defer { server.stop() }
        let client = CurlHTTPClient()
        await client.shutdown()
        let error = await transportError { try await client.send(HTTPRequest(url: server.baseURL)) }
        #expect(error?.code == .cancelled)
        #expect(server.requestsReceived == 0)
        #expect(client.statistics.liveHandles == 0)
    }
}

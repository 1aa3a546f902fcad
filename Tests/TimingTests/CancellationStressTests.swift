import AdMediation
import AdMediationTesting
import AdTransport
import CurlTransport
import Foundation
import TestSupport
import Testing

// 600 concurrent requests to one loopback server, at most 64 connections at a time (so most transfers queue inside
// libcurl and some cancellations hit queued transfers). Uncapped, the 600 simultaneous connects failed with curl 7
// ("Couldn't connect", after ~40 ms) about once in ten plain `swift test` runs on two busy cores; the cause is not
// understood and that storm is no longer exercised.
@Suite("Cancellation under load", .timeLimit(.minutes(2)))
struct CancellationStressTests {
    /// Regression: a cancellation arriving after its transfer finished must not touch the new transfer that reused
    /// the freed handle's address (it used to free a handle twice).
    @Test func randomCancellationsAmongManyRequestsLeaveNoHandleAndNoCrash() async throws {
        var configuration = CurlHTTPClient.Configuration()
        configuration.maxConnectionsPerHost = 64
        try await withServer(
            configuration: configuration,
            { request in .respond(.text("ok", delay: .microseconds(Int64(request.path.count % 3) * 500))) }
        ) { server, client in
            let outcomes = await withTaskGroup(of: String.self) { group in
                for i in 0..<600 {
                    group.addTask {
                        let task = Task {
                            try await client.send(HTTPRequest(url: server.baseURL + "/\(i)", timeout: .seconds(5)))
                        }
                        if i % 2 == 0 {
                            for _ in 0..<(i % 7) { await Task.yield() }
                            task.cancel()
                        }
                        switch await task.result {
                        case .success(let response): return response.status == 200 ? "ok" : "status"
                        case .failure(let error):
                            return (error as? HTTPClientError)?.code == .cancelled ? "cancelled" : "\(error)"
                        }
                    }
                }
                var all: [String] = []
                for await outcome in group { all.append(outcome) }
                return all
            }
            #expect(outcomes.count == 600)
            #expect(outcomes.allSatisfy { $0 == "ok" || $0 == "cancelled" }, "\(Set(outcomes))")
            #expect(outcomes.filter { $0 == "ok" }.count >= 300, "every uncancelled request succeeds")
            #expect(client.statistics.liveHandles == 0)
        }
    }
}

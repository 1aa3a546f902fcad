import AdMediation
import AdMediationTesting
import AdTransport
import AdapterKit
import CurlTransport
import Foundation
import Testing

/// The request runner with an adapter's own transport mapping (MARS's and GrowthCat's error tables), and
/// `response(to:deadline:)` for adapters that read every status themselves; over loopback HTTP through libcurl.
@Suite("Request runner: an adapter's transport mapping", .timeLimit(.minutes(1)))
struct RequestRunnerMappingTests {
    static let mapped = AdError.Reason(domain: "test", name: "mapped")

    /// A mapping that calls every transport failure a network error of its own wording and reason.
    static let mapping: RequestRunner.TransportFailure = {
        AdError(.network, "mapped \($0.code.rawValue): \($0.message)", reason: mapped)
    }

    @Test("a transport failure is worded by the adapter's mapping")
    func aTransportFailureIsWordedByTheAdaptersMapping() async throws {
        let server = try LoopbackHTTPServer { _ in .closeWithoutResponse }
        defer { server.stop() }
        let curl = CurlHTTPClient()
        let runner = RequestRunner(http: curl, transportFailure: Self.mapping)
        let result = await outcome { try await runner.response(to: HTTPRequest(url: server.baseURL + "/ad")) }
        await curl.shutdown()
        let error = try #require(result.failure as? AdError)
        #expect(error.reason == Self.mapped)
        #expect(error.code == .network && error.message.hasPrefix("mapped "))
    }

    @Test("a cancelled task sends nothing and is cancelled, whatever code the adapter's mapping gives")
    func aCancellationStaysCancelledUnderTheAdaptersMapping() async throws {
        let server = try LoopbackHTTPServer { _ in .respond(.text("ad")) }
        defer { server.stop() }
        let curl = CurlHTTPClient()
        let runner = RequestRunner(http: curl, transportFailure: Self.mapping)
        let url = server.baseURL + "/ad"
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await runner.response(to: HTTPRequest(url: url))
        }
        let result = await task.result
        await curl.shutdown()
        let error = try #require(result.failure as? AdError)
        #expect(error.code == .cancelled)
        #expect(error.reason == Self.mapped, "worded by the adapter")
        #expect(server.requestsReceived == 0)
    }

    @Test("a response's deadline replaces the request's own timeout")
    func aResponsesDeadlineReplacesTheRequestsTimeout() async throws {
        let server = try LoopbackHTTPServer { _ in .respond(.text("late", delay: .seconds(3))) }
        defer { server.stop() }
        let curl = CurlHTTPClient()
        let runner = RequestRunner(http: curl)
        let result = await outcome {
            try await runner.response(
                to: HTTPRequest(url: server.baseURL + "/ad", timeout: .seconds(10)), deadline: .milliseconds(200))
        }
        await curl.shutdown()
        // Under the request's own 10 s the 3 s answer would have arrived: a timeout proves the deadline replaced it.
        #expect((result.failure as? AdError)?.code == .timeout)
    }
}

/// The outcome of an async throwing call.
private func outcome<T>(_ body: () async throws -> T) async -> Result<T, any Error> {
    do { return .success(try await body()) } catch { return .failure(error) }
}

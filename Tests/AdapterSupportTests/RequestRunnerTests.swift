import AdMediation
import AdMediationTesting
import AdTransport
import AdapterKit
import AdapterSupport
import CurlTransport
import Foundation
import Testing

/// The request runner's mapping table, one behaviour each, over real loopback HTTP through the libcurl transport.
@Suite("Request runner", .timeLimit(.minutes(1)))
struct RequestRunnerTests {
    /// Runs one request against a server answering every request with `action`.
    static func outcome(
        of action: LoopbackHTTPServer.Action, deadline: Duration = .seconds(5),
        contract: RequestRunner.StatusContract = .init()
    ) async throws -> Result<RequestRunner.Outcome, AdError> {
        let server = try LoopbackHTTPServer { _ in action }
        let curl = CurlHTTPClient()
        defer { server.stop() }
        let runner = RequestRunner(http: curl)
        let result: Result<RequestRunner.Outcome, AdError>
        do {
            result = .success(
                try await runner.run(HTTPRequest(url: server.baseURL + "/ad"), deadline: deadline, contract: contract))
        } catch let error as AdError {
            result = .failure(error)
        }
        await curl.shutdown()
        return result
    }

    static func code(of status: Int, headers: [(String, String)] = []) async throws -> AdError.Code? {
        let answer = LoopbackHTTPServer.Response(
            status: status, headers: headers, body: Array(#"{"error":{"code":"e","message":"m"}}"#.utf8))
        return try await outcome(of: .respond(answer)).failure?.code
    }

    @Test func aFillStatusReturnsTheBody() async throws {
        let result = try await Self.outcome(of: .respond(.text("ad")))
        #expect(try result.get() == .body(Data("ad".utf8)))
    }

    @Test func aNoFillStatusReturnsTheContractsReason() async throws {
        let result = try await Self.outcome(
            of: .respond(.init(status: 204)), contract: .init(noFill: [204: "no bid (204)"]))
        #expect(try result.get() == .noFill(NoFill(reason: "no bid (204)")))
    }

    @Test func aStatusTheContractDoesNotFillIsAnErrorEvenWhenSuccessful() async throws {
        let result = try await Self.outcome(of: .respond(.text("ad")), contract: .init(fill: [201]))
        #expect(result.failure?.code == .server(status: 200))
    }

    @Test func badRequestIsBadRequest() async throws {
        #expect(try await Self.code(of: 400) == .badRequest)
    }

    @Test func unauthorizedIsUnauthorized() async throws {
        #expect(try await Self.code(of: 401) == .unauthorized)
    }

    @Test func forbiddenIsForbidden() async throws {
        #expect(try await Self.code(of: 403) == .forbidden)
    }

    @Test func notFoundIsAServerErrorWithItsStatus() async throws {
        #expect(try await Self.code(of: 404) == .server(status: 404))
    }

    @Test func rateLimitedCarriesRetryAfter() async throws {
        #expect(try await Self.code(of: 429, headers: [("Retry-After", "7")]) == .rateLimited(retryAfter: .seconds(7)))
    }

    @Test func rateLimitedWithoutRetryAfterHasNoDelay() async throws {
        #expect(try await Self.code(of: 429) == .rateLimited(retryAfter: nil))
    }

    @Test func serverErrorsKeepTheirStatus() async throws {
        #expect(try await Self.code(of: 503) == .server(status: 503))
    }

    @Test func anErrorsMessageIsTheContractsErrorSummary() async throws {
        let answer = LoopbackHTTPServer.Response(
            status: 500, body: Array(#"{"error":{"code":"boom","message":"down"}}"#.utf8))
        let result = try await Self.outcome(of: .respond(answer))
        let error = try #require(result.failure, "a 500 must fail")
        #expect(error.message == "HTTP 500 boom: down")
    }

    @Test func theDeadlineBecomesATimeout() async throws {
        let slow = LoopbackHTTPServer.Response.text("late", delay: .seconds(3))
        let result = try await Self.outcome(of: .respond(slow), deadline: .milliseconds(200))
        let error = try #require(result.failure, "a late answer must time out")
        #expect(error.code == .timeout)
    }

    @Test func aResetConnectionIsANetworkError() async throws {
        let long = LoopbackHTTPServer.Response.text(String(repeating: "x", count: 4096))
        let result = try await Self.outcome(of: .resetMidBody(long, afterBytes: 10))
        let error = try #require(result.failure, "a reset must fail")
        #expect(error.code == .network)
    }

    @Test func aCancelledTaskSendsNothing() async throws {
        let server = try LoopbackHTTPServer { _ in .respond(.text("ad")) }
        defer { server.stop() }
        let curl = CurlHTTPClient()
        let runner = RequestRunner(http: curl)
        let url = server.baseURL + "/ad"
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await runner.run(HTTPRequest(url: url), deadline: .seconds(5))
        }
        let result = await task.result
        await curl.shutdown()
        #expect(throws: AdError(.cancelled, "cancelled before the request was sent")) { try result.get() }
        #expect(server.requestsReceived == 0)
    }

    @Test func cancellingInFlightIsCancelled() async throws {
        let (arrived, arrival) = AsyncStream<Void>.makeStream()
        let server = try LoopbackHTTPServer { _ in
            arrival.yield()
            return .respond(.text("late", delay: .seconds(3)))
        }
        defer { server.stop() }
        let curl = CurlHTTPClient()
        let runner = RequestRunner(http: curl)
        let url = server.baseURL + "/ad"
        let task = Task { try await runner.run(HTTPRequest(url: url), deadline: .seconds(10)) }
        var iterator = arrived.makeAsyncIterator()
        _ = await iterator.next()  // bounded by the suite's time limit
        task.cancel()
        let result = await task.result
        await curl.shutdown()
        let error = try #require(result.failure as? AdError, "cancel must fail the run")
        #expect(error.code == .cancelled)
    }

    /// A client that stops with Swift's own `CancellationError` rather than the transport's `cancelled`.
    struct ThrowsCancellation: HTTPClient {
        func send(_ request: HTTPRequest) async throws -> HTTPResponse { throw CancellationError() }
    }

    @Test func aClientsCancellationErrorIsCancelled() async throws {
        let runner = RequestRunner(http: ThrowsCancellation())
        await #expect(throws: AdError(.cancelled, "cancelled while the request was in flight")) {
            try await runner.run(HTTPRequest(url: "http://127.0.0.1:1/ad"), deadline: .seconds(1))
        }
    }
}

extension Result {
    /// The error, when this is a failure.
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}

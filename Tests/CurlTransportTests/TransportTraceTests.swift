import AdMediation
import AdMediationTesting
import AdTransport
import CurlTransport
import InMemoryTracing
import Testing
import Tracing

@Suite("Transport spans", .timeLimit(.minutes(1)))
struct TransportTraceTests {
    func string(_ span: FinishedInMemorySpan, _ key: String) -> String? {
        if case .string(let value)? = span.attributes[key]?.toSpanAttribute() { return value }
        return nil
    }

    func int(_ span: FinishedInMemorySpan, _ key: String) -> Int64? {
        if case .int64(let value)? = span.attributes[key]?.toSpanAttribute() { return value }
        return nil
    }

    @Test func aRequestIsAClientSpanChildOfTheCallersSpanWithoutItsQuery() async throws {
        let server = try LoopbackHTTPServer { _ in .respond(.text("ok")) }
        defer { server.stop() }
        let tracer = InMemoryTracer()
        let client = CurlHTTPClient(tracer: tracer)
        try await tracer.withSpan("ad line") { _ in
            _ = try await client.send(HTTPRequest(url: server.baseURL + "/v1/ads?api_key=s3cr3t"))
        }
        await client.shutdown()
        let parent = try #require(tracer.finishedSpans.first { $0.operationName == "ad line" })
        let http = try #require(tracer.finishedSpans.first { $0.operationName == "HTTP GET" })
        #expect(http.parentSpanID == parent.spanID && http.traceID == parent.traceID)
        #expect(http.kind == .client)
        #expect(string(http, "url.path") == "/v1/ads" && string(http, "server.address") == "127.0.0.1")
        #expect(int(http, "http.response.status_code") == 200)
        #expect(!"\(http.attributes)".contains("s3cr3t"), "the query stays out of spans")
    }

    @Test func aFailedRequestSpanRecordsTheErrorAndItsType() async throws {
        let port = try LoopbackHTTPServer.refusingPort()
        let tracer = InMemoryTracer()
        let client = CurlHTTPClient(tracer: tracer)
        _ = try? await client.send(HTTPRequest(url: "http://127.0.0.1:\(port)/x"))
        await client.shutdown()
        let http = try #require(tracer.finishedSpans.first)
        #expect(string(http, "error.type") == "connection_refused")
        #expect(http.errors.count == 1)
    }
}

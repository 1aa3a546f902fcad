import AdMediation
import AdMediationTesting
import AdTransport
import CurlTransport
import Foundation
import Logging
import TestSupport
import Testing

@Suite("Transport logs", .timeLimit(.minutes(1)))
struct TransportLogTests {
    @Test func eachRequestIsOneDebugRecordWithoutItsQueryOrHeaders() async throws {
        let server = try LoopbackHTTPServer { _ in .respond(.text("ok")) }
        defer { server.stop() }
        let logs = LogCapture()
        let client = CurlHTTPClient(logger: logs.logger(label: "admediation.transport", level: .debug))
        _ = try await client.send(
            HTTPRequest(url: server.baseURL + "/v1/ads?api_key=s3cr3t", headers: ["Authorization": "Bearer s3cr3t"]))
        await client.shutdown()
        #expect(logs.all.count == 1)
        let record = try #require(logs.all.first)
        #expect(record.message == "request")
        #expect(record.metadata["target"] == server.baseURL + "/v1/ads")
        #expect(record.metadata["status"] == "200" && record.metadata["method"] == "GET")
        #expect(!"\(logs.all)".contains("s3cr3t"))
    }

    @Test func aFailedRequestIsLoggedWithItsCode() async throws {
        let port = try LoopbackHTTPServer.refusingPort()
        let logs = LogCapture()
        let client = CurlHTTPClient(logger: logs.logger(label: "admediation.transport", level: .debug))
        _ = try? await client.send(HTTPRequest(url: "http://127.0.0.1:\(port)/x"))
        await client.shutdown()
        #expect(logs.all.map(\.message) == ["request failed"])
        #expect(logs.all.first?.metadata["code"] == "connection_refused")
    }

    @Test func aboveDebugNothingIsLogged() async throws {
        let server = try LoopbackHTTPServer { _ in .respond(.text("ok")) }
        defer { server.stop() }
        let logs = LogCapture()
        let client = CurlHTTPClient(logger: logs.logger(label: "admediation.transport", level: .info))
        _ = try await client.send(HTTPRequest(url: server.baseURL + "/"))
        await client.shutdown()
        #expect(logs.all.isEmpty)
    }
}

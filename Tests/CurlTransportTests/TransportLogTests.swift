import AdMediation
import CurlTransport
import Foundation
import Logging
import LoopbackServer
import Synchronization
import Testing

/// Collects the messages and metadata of every record.
final class TransportLogs: Sendable {
    private let records = Mutex<[(message: String, metadata: [String: String])]>([])
    var all: [(message: String, metadata: [String: String])] { records.withLock { $0 } }

    func logger(level: Logger.Level) -> Logger {
        var logger = Logger(label: "admediation.transport") { _ in Handler(logs: self) }
        logger.logLevel = level
        return logger
    }

    private struct Handler: LogHandler {
        let logs: TransportLogs
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            let record = ("\(event.message)", (event.metadata ?? [:]).mapValues { "\($0)" })
            logs.records.withLock { $0.append(record) }
        }
    }
}

@Suite("Transport logs", .timeLimit(.minutes(1)))
struct TransportLogTests {
    @Test func eachRequestIsOneDebugRecordWithoutItsQueryOrHeaders() async throws {
        let server = try LoopbackHTTPServer { _ in .respond(.text("ok")) }
        defer { server.stop() }
        let logs = TransportLogs()
        let client = CurlHTTPClient(logger: logs.logger(level: .debug))
        _ = try await client.send(HTTPRequest(url: server.baseURL + "/v1/ads?api_key=s3cr3t", headers: ["Authorization": "Bearer s3cr3t"]))
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
        let logs = TransportLogs()
        let client = CurlHTTPClient(logger: logs.logger(level: .debug))
        _ = try? await client.send(HTTPRequest(url: "http://127.0.0.1:\(port)/x"))
        await client.shutdown()
        #expect(logs.all.map(\.message) == ["request failed"])
        #expect(logs.all.first?.metadata["code"] == "connection_refused")
    }

    @Test func aboveDebugNothingIsLogged() async throws {
        let server = try LoopbackHTTPServer { _ in .respond(.text("ok")) }
        defer { server.stop() }
        let logs = TransportLogs()
        let client = CurlHTTPClient(logger: logs.logger(level: .info))
        _ = try await client.send(HTTPRequest(url: server.baseURL + "/"))
        await client.shutdown()
        #expect(logs.all.isEmpty)
    }
}

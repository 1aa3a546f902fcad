import AdMediation
import AdMediationTesting
import AdTransport
import CurlTransport
import Foundation
import TestSupport
import Testing

@Suite("Requests and responses", .timeLimit(.minutes(2)))
struct RequestResponseTests {
    @Test(arguments: TransportKind.allCases)
    func getReturnsStatusHeadersAndBody(kind: TransportKind) async throws {
        try await withServer(
            kind, .init(),
            { _ in
                .respond(.init(status: 203, headers: [("X-Answer", "42")], body: Array("hello".utf8)))
            }
        ) { server, client in
            let response = try await client.send(HTTPRequest(url: server.baseURL + "/hello"))
            #expect(response.status == 203)
            #expect(response.headers["X-Answer"] == "42")
            #expect(String(decoding: response.body, as: UTF8.self) == "hello")
        }
    }

    @Test(arguments: TransportKind.allCases)
    func responseHeaderLookupIgnoresCase(kind: TransportKind) async throws {
        try await withServer(kind, .init(), { _ in .respond(.init(headers: [("X-MiXeD-Case", "yes")])) }) {
            server, client in
            let response = try await client.send(HTTPRequest(url: server.baseURL))
            #expect(response.headers["x-mixed-case"] == "yes")
            #expect(response.headers["X-MIXED-CASE"] == "yes")
        }
    }

    @Test(arguments: TransportKind.allCases, [HTTPMethod.post, .put, .delete])
    func methodWithBodyAndHeadersReachesTheServer(kind: TransportKind, method: HTTPMethod) async throws {
        try await withServer(kind, .init(), echo) { server, client in
            let body = Data("{\"k\":\"\(method)\"}".utf8)
            let request = HTTPRequest(
                method: method, url: server.baseURL + "/items/1",
                headers: ["Content-Type": "application/json", "X-Custom": "abc"], body: body)
            let response = try await client.send(request)
            #expect(response.headers["X-Method"] == method.rawValue)
            #expect(response.headers["X-Seen-X-Custom"] == "abc")
            #expect(response.headers["X-Seen-Content-Type"] == "application/json")
            #expect(response.body == body)
        }
    }

    @Test(arguments: TransportKind.allCases)
    func deleteWithoutBodyUsesDeleteMethod(kind: TransportKind) async throws {
        try await withServer(kind, .init(), echo) { server, client in
            let response = try await client.send(HTTPRequest(method: .delete, url: server.baseURL + "/user/7"))
            #expect(response.headers["X-Method"] == "DELETE")
            #expect(response.body.isEmpty)
        }
    }

    @Test(arguments: TransportKind.allCases)
    func errorStatusIsAResponseNotAnError(kind: TransportKind) async throws {
        try await withServer(kind, .init(), { _ in .respond(.text("nope", status: 503)) }) { server, client in
            let response = try await client.send(HTTPRequest(url: server.baseURL))
            #expect(response.status == 503)
            #expect(String(decoding: response.body, as: UTF8.self) == "nope")
        }
    }

    @Test(arguments: TransportKind.allCases)
    func gzipResponsesAreDecoded(kind: TransportKind) async throws {
        // gzip of "hello gzip " × 100, produced by Python's gzip.compress(mtime=0).
        let gzipped: [UInt8] = [
            31, 139, 8, 0, 0, 0, 0, 0, 2, 3, 203, 72, 205, 201, 201, 87, 72, 175, 202, 44, 80, 200,
            24, 101, 142, 50, 71, 153, 163, 76, 114, 153, 0, 76, 86, 215, 15, 76, 4, 0, 0,
        ]
        try await withServer(
            kind, .init(),
            { request in
                guard request.header("Accept-Encoding")?.contains("gzip") == true else {
                    return .respond(.text("no gzip offered", status: 406))
                }
                return .respond(.init(headers: [("Content-Encoding", "gzip")], body: gzipped))
            }
        ) { server, client in
            let response = try await client.send(HTTPRequest(url: server.baseURL))
            #expect(response.status == 200)
            #expect(String(decoding: response.body, as: UTF8.self) == String(repeating: "hello gzip ", count: 100))
        }
    }

    @Test(arguments: TransportKind.allCases, [HTTPMethod.post, .put])
    func largeUploadSendsNoExpectContinue(kind: TransportKind, method: HTTPMethod) async throws {
        // libcurl adds `Expect: 100-continue` to PUTs and to POSTs over 1 MiB, and then waits up to 1 s for an answer
        // it never gets from most servers; it waits only after sending the header, so its absence rules the wait out.
        // TimingTests times the same upload on a quiet machine.
        try await withServer(kind, .init(), echo) { server, client in
            let body = Data(repeating: 0x61, count: 2 << 20)
            let response = try await client.send(
                HTTPRequest(method: method, url: server.baseURL + "/upload", body: body))
            #expect(response.headers["X-Seen-Expect"] == nil)
            #expect(response.body.count == body.count)
        }
    }

    @Test(arguments: TransportKind.allCases)
    func sequentialRequestsReuseOneConnection(kind: TransportKind) async throws {
        try await withServer(kind, .init(), { _ in .respond(.text("ok")) }) { server, client in
            for _ in 0..<100 {
                let response = try await client.send(HTTPRequest(url: server.baseURL + "/r"))
                #expect(response.status == 200)
            }
            #expect(server.requestsReceived == 100)
            #expect(server.connectionsAccepted == 1)
        }
    }

    @Test(arguments: TransportKind.allCases)
    func concurrentRequestsAllCompleteWithTheirOwnBodies(kind: TransportKind) async throws {
        try await withServer(kind, .init(), { request in .respond(.text("body-of-\(request.path)")) }) {
            server, client in
            let results = try await withThrowingTaskGroup(of: (Int, String).self) { group in
                for i in 0..<256 {
                    group.addTask {
                        let response = try await client.send(HTTPRequest(url: server.baseURL + "/\(i)"))
                        return (i, String(decoding: response.body, as: UTF8.self))
                    }
                }
                var all: [Int: String] = [:]
                for try await (i, body) in group { all[i] = body }
                return all
            }
            #expect(results.count == 256)
            for i in 0..<256 { #expect(results[i] == "body-of-/\(i)") }
            #expect(client.requestsHoldingResources == 0)
        }
    }

    @Test(arguments: TransportKind.allCases)
    func redirectsAreFollowed(kind: TransportKind) async throws {
        try await withServer(
            kind, .init(),
            { request in
                request.path == "/final"
                    ? .respond(.text("arrived")) : .respond(.init(status: 302, headers: [("Location", "/final")]))
            }
        ) { server, client in
            let response = try await client.send(HTTPRequest(url: server.baseURL + "/start"))
            #expect(response.status == 200)
            #expect(String(decoding: response.body, as: UTF8.self) == "arrived")
        }
    }
}

import AdMediation
import CurlTransport
import Foundation
import LoopbackServer
import Testing

/// Runs `body` with a server and a client, then shuts both down.
func withServer(
    configuration: CurlHTTPClient.Configuration = .init(),
    _ handler: @escaping @Sendable (LoopbackHTTPServer.Request) -> LoopbackHTTPServer.Action,
    _ body: (LoopbackHTTPServer, CurlHTTPClient) async throws -> Void
) async throws {
    let server = try LoopbackHTTPServer(handler: handler)
    let client = CurlHTTPClient(configuration: configuration)
    do {
        try await body(server, client)
    } catch {
        await client.shutdown()
        server.stop()
        throw error
    }
    await client.shutdown()
    server.stop()
}

/// The transport error a call threw, or nil if it did not throw one.
func transportError(_ operation: () async throws -> HTTPResponse) async -> HTTPClientError? {
    do {
        _ = try await operation()
        return nil
    } catch let error as HTTPClientError {
        return error
    } catch {
        return nil
    }
}

/// Elapsed milliseconds of `operation`.
func measureMs<T>(_ operation: () async throws -> T) async rethrows -> (T, Double) {
    let start = ContinuousClock.now
    let value = try await operation()
    return (value, (ContinuousClock.now - start).milliseconds)
}

/// An echo handler: replies with the method, the body, and an `X-Seen-*` header per request header.
let echo: @Sendable (LoopbackHTTPServer.Request) -> LoopbackHTTPServer.Action = { request in
    var headers = [("Content-Type", "text/plain"), ("X-Method", request.method), ("X-Target", request.target)]
    for field in request.headers { headers.append(("X-Seen-\(field.name)", field.value)) }
    return .respond(.init(status: 200, headers: headers, body: request.body))
}

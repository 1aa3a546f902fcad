import AdMediation
import AdMediationTesting
import AdTransport
import CurlTransport
import Foundation

/// Runs `body` with a server and a client, then shuts both down.
public func withServer(
    configuration: CurlHTTPClient.Configuration = .init(),
    _ handler: @escaping @Sendable (LoopbackHTTPServer.Request) -> LoopbackHTTPServer.Action,
    _ body: (LoopbackHTTPServer, CurlHTTPClient) async throws -> Void
) async throws {
    let server = try LoopbackHTTPServer(handler: handler)
    let client = CurlHTTPClient(configuration: configuration)
    try await withCleanup {
        try await body(server, client)
    } finally: {
        await client.shutdown()
        server.stop()
    }
}

/// The transport error a call threw, or nil if it did not throw one.
public func transportError(_ operation: () async throws -> HTTPResponse) async -> HTTPClientError? {
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
public func measureMs<T>(_ operation: () async throws -> T) async rethrows -> (T, Double) {
    let start = ContinuousClock.now
    let value = try await operation()
    return (value, (ContinuousClock.now - start).milliseconds)
}

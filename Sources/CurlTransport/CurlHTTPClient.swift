import AdMediation
import AdTransport
import CCurl
import CurlShim
import Foundation
import Logging
import Synchronization
import Tracing

/// An ``HTTPClient`` on one libcurl multi handle driven by one dedicated thread.
///
/// - Connections, DNS and TLS sessions are shared by every request of the client; keep one client per process.
/// - Every request has a deadline, enforced by the engine itself (so it also holds for requests queued behind a
///   connection limit, which libcurl 7.88 does not time out).
/// - Cancelling the calling task aborts the transfer and frees its handle.
/// - TLS peer and host verification is always on. Plain `http://` is allowed only to loopback hosts unless
///   ``Configuration/allowInsecureHTTP`` is set. Environment proxies are ignored; only ``Configuration/proxy`` is used.
/// - URLs are parsed by ``URLDestination`` (real IP parsing): odd address forms (`2130706433`, `0x7f.1`,
///   `[::ffff:127.0.0.1]`), reserved addresses (`0.0.0.0`) and user names in URLs are refused.
/// - Redirects are followed hop by hop, each under the same rule, never from a public host inward (to loopback or a
///   private network), and to another origin without the request's headers (only `Accept` and `Accept-Language`
///   go along) or its body (a `307`/`308` carrying a body to another origin is returned, not followed).
/// - Bodies are decoded from gzip/deflate/br/zstd and never buffered past ``Configuration/maxResponseBytes``.
/// - Response headers are read once, line by line as they arrive, and capped in count and bytes
///   (``Configuration/maxResponseHeaderCount``, ``Configuration/maxResponseHeaderBytes``): no response makes the
///   engine thread work more than linearly, so one server cannot stall the other requests of the process.
/// - SIGPIPE is ignored process-wide (required by libcurl with `NOSIGNAL`).
public final class CurlHTTPClient: HTTPClient {
    /// Settings of a client. Every field has a default.
    public struct Configuration: Sendable {
        /// Deadline of a request that does not set its own. Default 30 s.
        public var defaultTimeout: Duration = .seconds(30)
        /// Limit for DNS + TCP + TLS set-up, within the request's deadline. Default 10 s.
        public var connectTimeout: Duration = .seconds(10)
        /// Largest response body accepted; larger responses fail with `responseTooLarge`. Default 8 MiB.
        public var maxResponseBytes: Int = 8 << 20
        /// Most header fields one response may carry (folded and trailer lines count as fields); a response with
        /// more fails with `responseTooLarge` as soon as the first field over the cap arrives, before it is
        /// stored. Default 256.
        public var maxResponseHeaderCount: Int = 256
        /// Most bytes of header lines (status lines included) one transfer may receive over all its responses
        /// (redirects and interim responses included); past it the transfer fails with `responseTooLarge`.
        /// Default 64 KiB.
        public var maxResponseHeaderBytes: Int = 64 << 10
        /// Redirects followed before failing with `tooManyRedirects`. Default 5; 0 disables following (the redirect
        /// response is returned).
        public var maxRedirects: Int = 5
        /// Connections per host; requests beyond it queue (their deadlines still apply). Default unlimited.
        public var maxConnectionsPerHost: Int?
        /// Proxy URL (`http://host:port`). Default none; environment variables are never read.
        public var proxy: String?
        /// Allow plain `http://` to hosts other than loopback. Default false.
        public var allowInsecureHTTP: Bool = false
        /// Extra trusted CA certificates (PEM file) in addition to verification; verification itself cannot be
        /// turned off. Default: the system bundle only.
        public var caCertificatesPath: String?
        /// `User-Agent` header. Default `AdMediation/1`.
        public var userAgent: String = "AdMediation/1"
        /// Idle connections older than this are not reused. Default 60 s.
        public var maxIdleConnectionAge: Duration = .seconds(60)

        /// The defaults.
        public init() {}
    }

    /// Counters for tests and diagnostics.
    public struct Statistics: Sendable, Hashable {
        /// Easy handles held by requests (taken for a request and not yet given back).
        public var liveHandles: Int
        /// Transfers currently in the multi handle.
        public var activeTransfers: Int
        /// Easy handles kept, reset, for later requests (at most 64; none after ``CurlHTTPClient/shutdown()``).
        public var idleHandles: Int
        /// Whether the engine thread runs: false until the first request starts it, false again once
        /// ``CurlHTTPClient/shutdown()`` has ended it.
        public var engineRunning: Bool
    }

    private let engine: CurlEngine
    private let logger: Logger
    private let tracer: (any Tracer)?
    /// The configuration the client was created with.
    public let configuration: Configuration

    /// Creates a client with `configuration`. Nothing starts here: the first request sets libcurl up and starts the
    /// engine thread, so an app can construct the client at launch for free. At debug level, `logger` gets one record
    /// per request: method, target (scheme, host and path — never the query or a header), status or error code, and
    /// duration. Each request is an `HTTP <method>` client span of `tracer` (the app's `InstrumentationSystem` tracer
    /// when nil), a child of the caller's span — a mediated line's `ad line` span — with the OpenTelemetry HTTP
    /// attributes `http.request.method`, `url.scheme`, `server.address`, `server.port`, `url.path`,
    /// `http.response.status_code` and `error.type`. No trace header is sent to the server.
    public init(
        configuration: Configuration = Configuration(), logger: Logger = Logger(label: "admediation.transport"),
        tracer: (any Tracer)? = nil
    ) {
        self.configuration = configuration
        self.engine = CurlEngine(configuration: configuration)
        self.logger = logger
        self.tracer = tracer
    }

    deinit {
        engine.requestStop()
    }

    /// Current counters.
    public var statistics: Statistics { engine.statistics }

    /// Sends a request. See ``HTTPClient/send(_:)``.
    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let tracer = self.tracer ?? InstrumentationSystem.tracer
        // No tracer at all: the span would be a no-op carrying the caller's context; skip making and binding it.
        if tracer is NoOpTracer { return try await logged(request) }
        return try await tracer.withSpan("HTTP \(request.method.rawValue)", ofKind: .client) { span in
            // No backend records the span: skip the URL parsing and the attributes.
            guard span.isRecording else { return try await logged(request) }
            Self.describe(request, on: span)
            do {
                let response = try await logged(request)
                span.attributes["http.response.status_code"] = response.status
                if response.status >= 400 { span.setStatus(SpanStatus(code: .error)) }
                return response
            } catch {
                span.attributes["error.type"] = (error as? HTTPClientError)?.code.rawValue ?? "other"
                throw error  // withSpan records the error on the span
            }
        }
    }

    /// The request's span attributes; the query, which may carry ids or tokens, is left out like in logs.
    private static func describe(_ request: HTTPRequest, on span: any Span) {
        span.attributes["http.request.method"] = request.method.rawValue
        guard let components = URLComponents(string: request.url) else { return }
        if let scheme = components.scheme { span.attributes["url.scheme"] = scheme }
        if let host = components.host { span.attributes["server.address"] = host }
        if let port = components.port { span.attributes["server.port"] = port }
        span.attributes["url.path"] = components.percentEncodedPath
    }

    private func logged(_ request: HTTPRequest) async throws -> HTTPResponse {
        guard logger.logLevel <= .debug else { return try await followingRedirects(request) }
        let start = ContinuousClock.now
        var metadata: Logger.Metadata = [
            "method": "\(request.method.rawValue)", "target": "\(Self.logTarget(request.url))",
        ]
        do {
            let response = try await followingRedirects(request)
            metadata["status"] = "\(response.status)"
            metadata["ms"] = "\(Int((ContinuousClock.now - start).milliseconds.rounded()))"
            logger.debug("request", metadata: metadata)
            return response
        } catch {
            metadata["code"] = "\((error as? HTTPClientError)?.code.rawValue ?? "other")"
            metadata["ms"] = "\(Int((ContinuousClock.now - start).milliseconds.rounded()))"
            logger.debug("request failed", metadata: metadata)
            throw error
        }
    }

    /// Sends `request`, following its redirects hop by hop under the transport's rule (see `RedirectFollower`).
    private func followingRedirects(_ request: HTTPRequest) async throws -> HTTPResponse {
        let engine = self.engine
        let follower = RedirectFollower(
            maxRedirects: configuration.maxRedirects, allowInsecureHTTP: configuration.allowInsecureHTTP,
            defaultTimeout: configuration.defaultTimeout)
        return try await follower.send(request) { try await engine.send($0) }
    }

    /// Scheme, host, port and path of `url`: its query (which may carry ids or tokens) is left out of logs.
    static func logTarget(_ url: String) -> String {
        guard let components = URLComponents(string: url), let scheme = components.scheme, let host = components.host
        else {
            return "(not a URL)"
        }
        return "\(scheme)://\(host)\(components.port.map { ":\($0)" } ?? "")\(components.percentEncodedPath)"
    }

    /// Ends the client, as every component's `shutdown()` does: what it runs in the background (the engine thread)
    /// ends, in-flight and queued requests fail with `cancelled`, every handle is freed, later requests fail with
    /// `cancelled`, and it returns once the thread has finished. Idempotent.
    public func shutdown() async {
        await engine.stop()
    }
}

extension CurlHTTPClient: BackgroundWork {}

/// Runs `body` with a new ``CurlHTTPClient`` and shuts the client down afterwards — whether `body` returns or throws —
/// so its engine thread and every handle end with the scope.
///
/// ```swift
/// let response = try await withCurlHTTPClient { http in
///     try await http.send(HTTPRequest(url: "https://example.com/"))
/// }
/// ```
public func withCurlHTTPClient<T: Sendable>(
    configuration: CurlHTTPClient.Configuration = .init(),
    _ body: (CurlHTTPClient) async throws -> T
) async throws -> T {
    let client = CurlHTTPClient(configuration: configuration)
    return try await withCleanup {
        try await body(client)
    } finally: {
        await client.shutdown()
    }
}

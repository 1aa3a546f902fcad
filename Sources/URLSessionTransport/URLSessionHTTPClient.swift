import AdMediation
import AdTransport
import Foundation
import Synchronization

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// An ``HTTPClient`` on `URLSession`: the transport for iOS and tvOS apps (where libcurl is not available), and an
/// alternative to `CurlHTTPClient` on macOS and Linux (`FoundationNetworking`).
///
/// It keeps the contract of every ``HTTPClient`` of the project, with the same ``HTTPClientError`` codes:
/// - Every request has a deadline (``HTTPRequest/timeout``, else ``Configuration/defaultTimeout``) over the whole
///   request, redirects included, enforced by the client itself (URLSession's own `timeoutInterval` is an idle
///   timeout, reset by every byte).
/// - Cancelling the calling task cancels the URLSession task; ``shutdown()`` fails in-flight and later requests with
///   `cancelled`.
/// - Bodies are never buffered past ``Configuration/maxResponseBytes``; the transfer is cancelled at the cap.
/// - Redirects are never followed by URLSession: the client follows them hop by hop under the same rule as
///   `CurlHTTPClient` (each hop's URL checked, never from a public host inward, no headers but `Accept` and
///   `Accept-Language` and no body to another origin).
/// - URLs are checked by the destination policy's parser before anything is sent: `https` anywhere, plain `http`
///   only to loopback unless ``Configuration/allowInsecureHTTP``; odd address forms, reserved addresses and user
///   names in URLs are refused. Header names must be tokens and values free of control characters.
/// - No proxy unless ``Configuration/proxy`` is set; no cookies, no URL cache, no credential storage.
/// - TLS is URLSession's default evaluation (the system's trust store); the client never accepts an untrusted
///   certificate.
///
/// What URLSession cannot do as libcurl does is listed in the module's documentation (header caps are checked once
/// the head is parsed, repeated response fields arrive joined, the order of response fields is not kept).
public final class URLSessionHTTPClient: HTTPClient {
    /// Settings of a client. Every field has a default.
    public struct Configuration: Sendable {
        /// Deadline of a request that does not set its own. Default 30 s.
        public var defaultTimeout: Duration = .seconds(30)
        /// Largest response body accepted; larger responses fail with `responseTooLarge`. Default 8 MiB.
        public var maxResponseBytes: Int = 8 << 20
        /// Most header fields one response may carry; more fail with `responseTooLarge` (checked once URLSession has
        /// parsed the head). Default 256.
        public var maxResponseHeaderCount: Int = 256
        /// Most bytes of header fields (names and values) one response may carry; more fail with
        /// `responseTooLarge`. Default 64 KiB.
        public var maxResponseHeaderBytes: Int = 64 << 10
        /// Redirects followed before failing with `tooManyRedirects`. Default 5; 0 disables following (the redirect
        /// response is returned).
        public var maxRedirects: Int = 5
        /// Connections per host. Default 6 (URLSession's own default); requests beyond it queue (their deadlines
        /// still apply).
        public var maxConnectionsPerHost: Int = 6
        /// HTTP proxy (`http://host:port`) for plain `http` requests. Default none; neither the environment nor the
        /// system's proxy settings are read.
        public var proxy: String?
        /// Allow plain `http://` to hosts other than loopback. Default false.
        public var allowInsecureHTTP: Bool = false
        /// `User-Agent` header. Default `AdMediation/1`.
        public var userAgent: String = "AdMediation/1"

        /// The defaults.
        public init() {}
    }

    /// The configuration the client was created with.
    public let configuration: Configuration
    private let session: URLSession
    private let delegate: SessionDelegate

    /// Creates a client with `configuration` and its own `URLSession` (ephemeral: no cookies, cache or credentials
    /// are stored).
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        let settings = URLSessionConfiguration.ephemeral
        settings.httpCookieStorage = nil
        settings.httpShouldSetCookies = false
        settings.urlCache = nil
        settings.urlCredentialStorage = nil
        settings.requestCachePolicy = .reloadIgnoringLocalCacheData
        settings.httpMaximumConnectionsPerHost = max(1, configuration.maxConnectionsPerHost)
        settings.connectionProxyDictionary = Self.proxySettings(configuration.proxy)
        settings.httpAdditionalHeaders = ["User-Agent": configuration.userAgent]
        // The client enforces the deadline itself; these only stop URLSession from ending a transfer earlier.
        settings.timeoutIntervalForRequest = 7 * 24 * 3600
        settings.timeoutIntervalForResource = 7 * 24 * 3600
        let delegate = SessionDelegate(
            maxBytes: max(0, configuration.maxResponseBytes),
            maxHeaderCount: max(0, configuration.maxResponseHeaderCount),
            maxHeaderBytes: max(0, configuration.maxResponseHeaderBytes))
        let queue = OperationQueue()
        queue.name = "URLSessionHTTPClient"
        queue.maxConcurrentOperationCount = 1
        self.delegate = delegate
        self.session = URLSession(configuration: settings, delegate: delegate, delegateQueue: queue)
    }

    deinit {
        session.invalidateAndCancel()
    }

    /// Sends a request. See ``HTTPClient/send(_:)``.
    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let follower = RedirectFollower(
            maxRedirects: configuration.maxRedirects, allowInsecureHTTP: configuration.allowInsecureHTTP,
            defaultTimeout: configuration.defaultTimeout)
        return try await follower.send(request) { try await self.transfer($0) }
    }

    /// Ends the client, as every component's `shutdown()` does: the session is invalidated, requests in flight fail
    /// with `cancelled`, later ones are refused with `cancelled`. Idempotent.
    public func shutdown() async {
        delegate.shutDown()
        session.invalidateAndCancel()
    }

    /// Transfers currently in flight (for tests and diagnostics).
    public var activeTransfers: Int { delegate.activeCount }

    /// One transfer, no redirect following.
    private func transfer(_ request: HTTPRequest) async throws -> HTTPResponse {
        if Task.isCancelled { throw HTTPClientError(.cancelled, "the task was cancelled before the request was sent") }
        let destination = try TransportRules.destination(
            request.url, allowInsecureHTTP: configuration.allowInsecureHTTP)
        try TransportRules.validateHeaders(request.headers)
        guard let url = URL(string: request.url) else {
            throw HTTPClientError(.invalidURL, "not an absolute URL with a host")
        }
        // A deadline past 7 days is "very far": clamped, so no clock arithmetic overflows.
        let timeout = min(request.timeout ?? configuration.defaultTimeout, OutsideValue.maximumDuration)
        var urlRequest = URLRequest(url: url)
        urlRequest.httpMethod = request.method.rawValue
        urlRequest.httpShouldHandleCookies = false
        urlRequest.cachePolicy = .reloadIgnoringLocalCacheData
        // URLSession's own timer is idle time and FoundationNetworking truncates it to whole seconds (0 for less
        // than 1 s): set one second past the deadline, so the client's own deadline is the one that fires.
        urlRequest.timeoutInterval = (timeout.seconds + 1).rounded(.up)
        for field in request.headers { urlRequest.addValue(field.value, forHTTPHeaderField: field.name) }
        urlRequest.httpBody = request.body
        if request.method == .post, request.body == nil { urlRequest.httpBody = Data() }

        let label = "\(request.method.rawValue) to \(destination.host)"
        let state = TransferState(label: label, timeout: timeout)
        guard let task = delegate.start(state, session: session, request: urlRequest) else {
            throw HTTPClientError(.cancelled, "the client is shut down")
        }
        let deadline = Task {
            try? await Task.sleep(for: timeout)
            guard !Task.isCancelled else { return }
            if state.fail(HTTPClientError(.timeout, "\(label) did not complete within \(Int(timeout.milliseconds)) ms"))
            {
                task.cancel()
            }
        }
        defer { deadline.cancel() }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                state.install(continuation)
                task.resume()
            }
        } onCancel: {
            if state.fail(HTTPClientError(.cancelled, "\(label) was cancelled")) { task.cancel() }
        }
    }

    /// URLSession's proxy dictionary: HTTP through `proxy` when set, and otherwise every proxy kind turned off (so
    /// neither the environment nor the system settings apply).
    private static func proxySettings(_ proxy: String?) -> [AnyHashable: Any] {
        guard let proxy, let components = URLComponents(string: proxy), let host = components.host else {
            return ["HTTPEnable": false, "HTTPSEnable": false, "SOCKSEnable": false]
        }
        return [
            "HTTPEnable": true, "HTTPProxy": host, "HTTPPort": components.port ?? 80, "HTTPSEnable": false,
            "SOCKSEnable": false,
        ]
    }
}

/// Runs `body` with a new ``URLSessionHTTPClient`` and shuts the client down afterwards — whether `body` returns or
/// throws.
public func withURLSessionHTTPClient<T: Sendable>(
    configuration: URLSessionHTTPClient.Configuration = .init(),
    _ body: (URLSessionHTTPClient) async throws -> T
) async throws -> T {
    let client = URLSessionHTTPClient(configuration: configuration)
    return try await withCleanup {
        try await body(client)
    } finally: {
        await client.shutdown()
    }
}

extension URLSessionHTTPClient: BackgroundWork {}

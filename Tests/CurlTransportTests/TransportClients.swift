import AdMediation
import AdMediationTesting
import AdTransport
import CurlTransport
import Foundation
import Testing
import URLSessionTransport

/// The settings a transport test may change, common to every client.
struct TransportSettings: Sendable {
    var maxResponseBytes: Int?
    var maxResponseHeaderBytes: Int?
    var maxRedirects: Int?
    var defaultTimeout: Duration?
    var proxy: String?
    var maxConnectionsPerHost: Int?
}

/// A client under test: the ``HTTPClient`` contract plus shutdown and a count of requests still holding resources.
protocol TransportUnderTest: HTTPClient {
    /// Stops the client; requests in flight and later ones fail with `cancelled`.
    func shutdown() async
    /// Requests holding a resource of the client (a curl handle, a URLSession task).
    var requestsHoldingResources: Int { get }
}

extension CurlHTTPClient: TransportUnderTest {
    var requestsHoldingResources: Int { statistics.liveHandles }
}

extension URLSessionHTTPClient: TransportUnderTest {
    var requestsHoldingResources: Int { activeTransfers }
}

/// A rule of the transport contract that a client cannot keep, with the reason. Tests that check such a rule run
/// the check inside `withKnownIssue` for that client, so the gap is recorded (and noticed when it closes: a known
/// issue that no longer fails is reported).
enum TransportGap: String, Sendable, CaseIterable {
    /// URLSession hands over a parsed head: repeated response fields arrive joined with ", " and their order is lost.
    case repeatedResponseFieldsJoined = "URLSession joins repeated response fields"
    /// FoundationNetworking (URLSession on Linux) does not apply `connectionProxyDictionary`; its libcurl reads the
    /// environment's proxy variables instead, so a configured proxy is ignored and an environment proxy applies.
    case proxyFromEnvironment = "FoundationNetworking ignores the configured proxy and reads the environment's"
    /// FoundationNetworking parses response headers in time quadratic in their number, on the session's own queue:
    /// a flood of 60 000 header fields holds every request of the session for over a minute (and a core with it).
    case headerFloodStallsSession = "FoundationNetworking parses a header flood for minutes, holding the session"
}

/// The clients the transport suite runs against.
enum TransportKind: String, Sendable, CaseIterable, CustomTestStringConvertible {
    case curl
    case urlSession

    var testDescription: String { rawValue }

    /// The rules this client does not keep (empty for the reference client).
    var gaps: Set<TransportGap> {
        switch self {
        case .curl: []
        case .urlSession:
            #if canImport(FoundationNetworking)
                [.repeatedResponseFieldsJoined, .proxyFromEnvironment, .headerFloodStallsSession]
            #else
                [.repeatedResponseFieldsJoined]
            #endif
        }
    }

    /// Whether this client has `gap`.
    func has(_ gap: TransportGap) -> Bool { gaps.contains(gap) }

    /// A new client of this kind with `settings`.
    func make(_ settings: TransportSettings = .init()) -> any TransportUnderTest {
        switch self {
        case .curl:
            var configuration = CurlHTTPClient.Configuration()
            if let value = settings.maxResponseBytes { configuration.maxResponseBytes = value }
            if let value = settings.maxResponseHeaderBytes { configuration.maxResponseHeaderBytes = value }
            if let value = settings.maxRedirects { configuration.maxRedirects = value }
            if let value = settings.defaultTimeout { configuration.defaultTimeout = value }
            configuration.proxy = settings.proxy
            configuration.maxConnectionsPerHost = settings.maxConnectionsPerHost
            return CurlHTTPClient(configuration: configuration)
        case .urlSession:
            var configuration = URLSessionHTTPClient.Configuration()
            if let value = settings.maxResponseBytes { configuration.maxResponseBytes = value }
            if let value = settings.maxResponseHeaderBytes { configuration.maxResponseHeaderBytes = value }
            if let value = settings.maxRedirects { configuration.maxRedirects = value }
            if let value = settings.defaultTimeout { configuration.defaultTimeout = value }
            configuration.proxy = settings.proxy
            if let value = settings.maxConnectionsPerHost { configuration.maxConnectionsPerHost = value }
            let client = URLSessionHTTPClient(configuration: configuration)
            return has(.proxyFromEnvironment) ? EnvironmentGatedClient(client) : client
        }
    }

    /// The default response body cap of this client's configuration.
    var defaultMaxResponseBytes: Int {
        switch self {
        case .curl: CurlHTTPClient.Configuration().maxResponseBytes
        case .urlSession: URLSessionHTTPClient.Configuration().maxResponseBytes
        }
    }

    /// The default response header field cap of this client's configuration.
    var defaultMaxResponseHeaderCount: Int {
        switch self {
        case .curl: CurlHTTPClient.Configuration().maxResponseHeaderCount
        case .urlSession: URLSessionHTTPClient.Configuration().maxResponseHeaderCount
        }
    }
}

/// Runs `body` with a server and a client of `kind`, then shuts both down.
func withServer(
    _ kind: TransportKind, _ settings: TransportSettings = .init(),
    _ handler: @escaping @Sendable (LoopbackHTTPServer.Request) -> LoopbackHTTPServer.Action,
    _ body: (LoopbackHTTPServer, any TransportUnderTest) async throws -> Void
) async throws {
    let server = try LoopbackHTTPServer(handler: handler)
    let client = kind.make(settings)
    try await withCleanup {
        try await body(server, client)
    } finally: {
        await client.shutdown()
        server.stop()
    }
}

/// Runs `check` as a known issue when `kind` has `gap` (the check is expected to fail), and plainly otherwise.
func checking(
    _ kind: TransportKind, unless gap: TransportGap, sourceLocation: SourceLocation = #_sourceLocation,
    _ check: () async throws -> Void
) async rethrows {
    if kind.has(gap) {
        await withKnownIssue(Comment(rawValue: gap.rawValue), sourceLocation: sourceLocation) { try await check() }
    } else {
        try await check()
    }
}

/// Records a known issue instead of running a check that `kind` cannot pass and whose run would disturb the other
/// tests of the process (process-wide settings, minutes of a busy core); true when the caller must return.
func skipping(_ kind: TransportKind, for gap: TransportGap, because reason: String) -> Bool {
    guard kind.has(gap) else { return false }
    withKnownIssue(Comment(rawValue: gap.rawValue)) { Issue.record("not run for \(kind): \(reason)") }
    return true
}

/// A client that reads the process environment's proxy variables (URLSession on Linux) sends only while no test has
/// set them: every send holds a shared turn of ``ProxyEnvironment``, and a test that sets the variables holds the
/// exclusive one.
struct EnvironmentGatedClient<Client: TransportUnderTest>: TransportUnderTest {
    let client: Client
    init(_ client: Client) { self.client = client }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        await ProxyEnvironment.gate.enterShared()
        do {
            let response = try await client.send(request)
            await ProxyEnvironment.gate.leaveShared()
            return response
        } catch {
            await ProxyEnvironment.gate.leaveShared()
            throw error
        }
    }

    func shutdown() async { await client.shutdown() }
    var requestsHoldingResources: Int { client.requestsHoldingResources }
}

/// Turns on the process's proxy environment variables: shared while requests that read them run, exclusive while a
/// test sets them (a waiting exclusive turn goes before later shared ones).
actor ProxyEnvironment {
    static let gate = ProxyEnvironment()

    private var shared = 0
    private var exclusive = false
    private var waitingShared: [CheckedContinuation<Void, Never>] = []
    private var waitingExclusive: [CheckedContinuation<Void, Never>] = []

    func enterShared() async {
        if exclusive || !waitingExclusive.isEmpty {
            await withCheckedContinuation { waitingShared.append($0) }
        } else {
            shared += 1
        }
    }

    func leaveShared() {
        shared -= 1
        if shared == 0, !waitingExclusive.isEmpty {
            exclusive = true
            waitingExclusive.removeFirst().resume()
        }
    }

    /// Runs `body` with no shared turn held.
    func exclusively<T: Sendable>(_ body: @Sendable () async throws -> T) async rethrows -> T {
        if exclusive || shared > 0 {
            await withCheckedContinuation { waitingExclusive.append($0) }
        } else {
            exclusive = true
        }
        defer { leaveExclusive() }
        return try await body()
    }

    private func leaveExclusive() {
        if !waitingExclusive.isEmpty {
            waitingExclusive.removeFirst().resume()
            return
        }
        exclusive = false
        shared += waitingShared.count
        for waiter in waitingShared { waiter.resume() }
        waitingShared.removeAll()
    }
}

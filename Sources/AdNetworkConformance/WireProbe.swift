import AdMediation
import AdMediationTesting
import AdTransport
import Foundation

/// What reached a network's wire, as the conformance kit sees it.
public protocol WireProbe: Sendable {
    /// Requests sent so far.
    var requestCount: Int { get }
    /// Requests currently in flight.
    var requestsInFlight: Int { get }
    /// A text rendering of each request sent (method, URL, headers, body), in order.
    var requestTexts: [String] { get }
    /// The URLs (without their query) of the HTTP requests sent without a destination rule
    /// (`HTTPRequest.destination`), in order.
    var requestsWithoutDestinationRule: [String] { get }
}

extension WireProbe {
    /// None: a probe that sees no HTTP requests (an in-process network) records none without a rule.
    public var requestsWithoutDestinationRule: [String] { [] }
}

/// An `HTTPClient` wrapper that records every request for the conformance kit: give it to the adapter under
/// test, and the kit to it as the ``WireProbe``.
public final class RecordingHTTPClient: HTTPClient, WireProbe {
    private struct State {
        var texts: [String] = []
        var inFlight = 0
        var withoutRule: [String] = []
    }

    private let base: any HTTPClient
    private let state = LockedValue(State())

    /// Wraps `base`.
    public init(wrapping base: any HTTPClient) {
        self.base = base
    }

    /// Records the request, then sends it through the wrapped client.
    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        var text = "\(request.method) \(request.url)\n"
        for field in request.headers { text += "\(field.name): \(field.value)\n" }
        if let body = request.body { text += String(decoding: body, as: UTF8.self) }
        let unruled = request.destination == nil
        state.withLock {
            $0.texts.append(text)
            $0.inFlight += 1
            if unruled { $0.withoutRule.append(String(request.url.prefix { $0 != "?" }.prefix(200))) }
        }
        defer { state.withLock { $0.inFlight -= 1 } }
        return try await base.send(request)
    }

    /// Requests sent so far.
    public var requestCount: Int { state.withLock { $0.texts.count } }
    /// Requests in flight.
    public var requestsInFlight: Int { state.withLock { $0.inFlight } }
    /// Every request as text.
    public var requestTexts: [String] { state.withLock { $0.texts } }
    /// The URLs (without their query) of the requests sent without a destination rule.
    public var requestsWithoutDestinationRule: [String] { state.withLock { $0.withoutRule } }
}

/// The scripted network records each load and event as a wire request.
extension ScriptedAdNetwork: WireProbe {}

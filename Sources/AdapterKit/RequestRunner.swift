import AdMediation
import AdTransport
import Foundation

/// Sends an adapter's request and turns what comes back into an outcome or an ``AdError``, written once for every
/// adapter: the deadline goes on the request (the ``HTTPClient`` enforces it), a cancelled task sends nothing,
/// a transport failure becomes an ``AdError`` (through ``AdError/init(_:)``, or the adapter's own
/// ``TransportFailure`` mapping), and a status the contract neither fills nor calls a no fill becomes
/// ``AdError/http(status:retryAfter:message:)`` (429 with its `Retry-After`).
public struct RequestRunner: Sendable {
    /// Sends one request the adapter's way (it may sign it); throws ``HTTPClientError`` for transport failures.
    public typealias Send = @Sendable (HTTPRequest) async throws -> HTTPResponse

    /// Which statuses of an answer are a fill and which a no fill; any other status is an error.
    public struct StatusContract: Sendable {
        /// Statuses whose body is the answer to read. Default 200.
        public var fill: Set<Int>
        /// Statuses that mean "no ad", with the no fill's reason. Default 204, `"204 no fill"`.
        public var noFill: [Int: String]

        /// A contract: `fill` statuses carry a body; `noFill` statuses are a no fill with their reason.
        public init(fill: Set<Int> = [200], noFill: [Int: String] = [204: "204 no fill"]) {
            self.fill = fill
            self.noFill = noFill
        }
    }

    /// What a request under a contract gave, when it did not fail.
    public enum Outcome: Sendable, Equatable {
        /// A fill status: the body, for the adapter to read.
        case body(Data)
        /// A no-fill status.
        case noFill(NoFill)
    }

    /// Turns a transport failure into the adapter's ``AdError`` (for an adapter whose contract names its own transport
    /// errors, such as a reason per failure). A cancellation, before sending or in flight, comes to it as
    /// ``HTTPClientError/Code/cancelled`` too, and stays ``AdError/Code/cancelled`` whatever code it returns.
    public typealias TransportFailure = @Sendable (HTTPClientError) -> AdError

    private let send: Send
    private let transportFailure: TransportFailure

    /// A runner sending through `send` (for adapters that sign or otherwise shape each request).
    public init(send: @escaping Send) { self.init(send: send, transportFailure: { AdError($0) }) }

    /// A runner sending through `send`, a transport failure mapped by `transportFailure` instead of
    /// ``AdError/init(_:)``.
    public init(send: @escaping Send, transportFailure: @escaping TransportFailure) {
        self.send = send
        self.transportFailure = transportFailure
    }

    /// A runner sending through `http` as it is.
    public init(http: any HTTPClient) { self.init(http: http, transportFailure: { AdError($0) }) }

    /// A runner sending through `http` as it is, a transport failure mapped by `transportFailure` instead of
    /// ``AdError/init(_:)``.
    public init(http: any HTTPClient, transportFailure: @escaping TransportFailure) {
        self.init(send: { try await http.send($0) }, transportFailure: transportFailure)
    }

    /// Sends `request` within `deadline` and maps its status by `contract`.
    ///
    /// - Throws: ``AdError``: `cancelled` when the task is cancelled (before or while sending), `timeout` when the
    ///   deadline passes, the transport's mapping for other failures, and ``AdError/http(status:retryAfter:message:)``
    ///   for a status outside `contract` (its message the contract's error summary).
    public func run(_ request: HTTPRequest, deadline: Duration, contract: StatusContract = StatusContract())
        async throws -> Outcome
    {
        let response = try await response(to: request, deadline: deadline)
        if contract.fill.contains(response.status) { return .body(response.body) }
        if let reason = contract.noFill[response.status] { return .noFill(NoFill(reason: reason)) }
        throw AdError.http(status: response.status, retryAfter: response.retryAfter, message: response.errorSummary)
    }

    /// Sends `request` and returns the response whatever its status; transport failures and cancellation become
    /// ``AdError``s (for callers with their own status rules, such as tracking).
    public func response(to request: HTTPRequest) async throws -> HTTPResponse {
        if Task.isCancelled { throw failure(HTTPClientError(.cancelled, "cancelled before the request was sent")) }
        do {
            return try await send(request)
        } catch let error as HTTPClientError {
            throw failure(error)
        } catch is CancellationError {
            throw failure(HTTPClientError(.cancelled, "cancelled while the request was in flight"))
        }
    }

    /// Sends `request` within `deadline` (it replaces the request's own timeout) and returns the response whatever
    /// its status, as ``response(to:)`` does (for adapters with their own status table or a retry policy that reads
    /// every answer).
    public func response(to request: HTTPRequest, deadline: Duration) async throws -> HTTPResponse {
        var request = request
        request.timeout = deadline
        return try await response(to: request)
    }

    /// A transport failure by the adapter's mapping; a cancellation stays ``AdError/Code/cancelled`` whatever it says.
    private func failure(_ error: HTTPClientError) -> AdError {
        let mapped = transportFailure(error)
        guard error.code == .cancelled, mapped.code != .cancelled else { return mapped }
        return AdError(.cancelled, mapped.message, reason: mapped.reason)
    }
}

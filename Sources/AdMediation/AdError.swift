/// The error every adapter, the mediator and the transport report. No fill is not an error: see ``AdLoadResult``.
public struct AdError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong, as a value callers can switch over.
    public enum Code: Hashable, Sendable {
        /// The request never got an HTTP answer (refused, unresolvable, reset, TLS, truncated, …).
        case network
        /// The request or load ran past its deadline.
        case timeout
        /// The credentials were rejected (HTTP 401, bad signature).
        case unauthorized
        /// The credentials are valid but not allowed to do this (HTTP 403).
        case forbidden
        /// The request was malformed (HTTP 400); retrying the same request can never succeed.
        case badRequest
        /// Too many requests; retry after the given delay when the server said so.
        case rateLimited(retryAfter: Duration?)
        /// The server failed with this HTTP status (5xx, or any status the contract does not define).
        case server(status: Int)
        /// The response could not be understood (malformed JSON, wrong shape, bad encoding).
        case invalidResponse
        /// The caller cancelled, or the client shut down.
        case cancelled
        /// The configuration or the request is invalid; the message names the field at fault.
        case configuration
        /// The operation is not allowed in the current state (event after invalidation, ad expired, …).
        case invalidState
        /// The feature is not available (for example OHTTP in the MARS client).
        case unsupported
        /// Durable local storage failed (disk full, read-only, locked or corrupt database): the work was not saved.
        case storage

        /// A stable snake_case name, used in traces, JSON output and metrics (`rate_limited`, `server_503`).
        public var name: String {
            switch self {
            case .network: "network"
            case .timeout: "timeout"
            case .unauthorized: "unauthorized"
            case .forbidden: "forbidden"
            case .badRequest: "bad_request"
            case .rateLimited: "rate_limited"
            case .server(let status): "server_\(status)"
            case .invalidResponse: "invalid_response"
            case .cancelled: "cancelled"
            case .configuration: "configuration"
            case .invalidState: "invalid_state"
            case .unsupported: "unsupported"
            case .storage: "storage"
            }
        }
    }

    /// What went wrong.
    public var code: Code
    /// A human-readable explanation. Never contains secrets.
    public var message: String

    /// Creates an error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// `"timeout: line 2 did not answer within 300 ms"`.
    public var description: String { "\(code.name): \(message)" }

    /// Whether retrying the same request later may succeed.
    public var isRetryable: Bool {
        switch code {
        case .network, .timeout, .rateLimited: true
        case .server(let status): status >= 500
        default: false
        }
    }

    /// Maps an HTTP status the contract calls an error onto the taxonomy (400/401/403/429/5xx; others → server).
    public static func http(status: Int, retryAfter: Duration? = nil, message: String) -> AdError {
        switch status {
        case 400: AdError(.badRequest, message)
        case 401: AdError(.unauthorized, message)
        case 403: AdError(.forbidden, message)
        case 429: AdError(.rateLimited(retryAfter: retryAfter), message)
        default: AdError(.server(status: status), message)
        }
    }
}

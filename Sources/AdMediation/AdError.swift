/// The error every adapter, the mediator and the transport report. No fill is not an error: see ``AdLoadResult``.
///
/// One model for the whole library, in the style of AsyncHTTPClient's `HTTPClientError`: a struct whose ``Code`` is a
/// struct over private cases with static members, so a new code never breaks a `switch` (match with
/// `case .timeout:` and keep a `default`), and an adapter's own detail is a ``Reason`` rather than a new error type.
public struct AdError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong, as a value callers can match (`case .timeout:`) and compare.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case network, timeout, unauthorized, forbidden, cancelled, configuration, unsupported, storage, server
            case badRequest = "bad_request"
            case rateLimited = "rate_limited"
            case invalidResponse = "invalid_response"
            case invalidState = "invalid_state"
            case noFill = "no_fill"
            case privacyBlocked = "privacy_blocked"
            case breakerOpen = "breaker_open"
        }

        private let base: Base
        /// The HTTP status of a ``server(status:)`` code; nil for the others.
        public let status: Int?
        /// The delay the server asked for, for ``rateLimited(retryAfter:)``; nil for the others.
        public let retryAfter: Duration?

        private init(_ base: Base, status: Int? = nil, retryAfter: Duration? = nil) {
            self.base = base
            self.status = status
            self.retryAfter = retryAfter
        }

        /// The request never got an HTTP answer (refused, unresolvable, reset, TLS, truncated, …).
        public static let network = Code(.network)
        /// The request or load ran past its deadline.
        public static let timeout = Code(.timeout)
        /// The credentials were rejected (HTTP 401, bad signature).
        public static let unauthorized = Code(.unauthorized)
        /// The credentials are valid but not allowed to do this (HTTP 403).
        public static let forbidden = Code(.forbidden)
        /// The request was malformed (HTTP 400); retrying the same request can never succeed.
        public static let badRequest = Code(.badRequest)
        /// Too many requests; retry after the given delay when the server said so.
        public static func rateLimited(retryAfter: Duration?) -> Code { Code(.rateLimited, retryAfter: retryAfter) }
        /// The server failed with this HTTP status (5xx, or any status the contract does not define).
        public static func server(status: Int) -> Code { Code(.server, status: status) }
        /// The response could not be understood (malformed JSON, wrong shape, bad encoding).
        public static let invalidResponse = Code(.invalidResponse)
        /// The caller cancelled, or the client shut down.
        public static let cancelled = Code(.cancelled)
        /// The configuration or the request is invalid; the message names the field at fault.
        public static let configuration = Code(.configuration)
        /// The operation is not allowed in the current state (event after invalidation, ad expired, …).
        public static let invalidState = Code(.invalidState)
        /// The feature is not available (for example OHTTP in the MARS client).
        public static let unsupported = Code(.unsupported)
        /// Durable local storage failed (disk full, read-only, locked or corrupt database): the work was not saved.
        public static let storage = Code(.storage)
        /// Nothing to show, reported as an error only where an API has no other way to say it (a banner delegate's
        /// `didCacheAd`); a load returns no fill as a value (``AdLoadResult/noFill(_:)``).
        public static let noFill = Code(.noFill)
        /// The privacy rules forbid asking this network for this request (`PrivacyRules`); the message says why.
        /// A network asked alone behind the privacy gate throws it; a ``Mediator`` skips the line instead.
        public static let privacyBlocked = Code(.privacyBlocked)
        /// Every line's circuit breaker was open: the request was refused without being sent (the networks had
        /// failed before). For reports (`mediate compare`); a ``Mediator`` skips such lines.
        public static let breakerOpen = Code(.breakerOpen)

        /// Whether this is a rate limit, whatever its delay.
        public var isRateLimited: Bool { base == .rateLimited }
        /// Whether this is a server failure, whatever its status.
        public var isServer: Bool { base == .server }

        /// A stable snake_case name, used in traces, JSON output and metrics (`rate_limited`, `server_503`).
        public var name: String {
            if base == .server, let status { return "server_\(status)" }
            return base.rawValue
        }

        /// The ``name``.
        public var description: String { name }
    }

    /// An adapter's own detail about an error (`mars.bad_request`, `banner.no_cached_ad`): adapters declare theirs as
    /// static members in an extension, so callers compare (`error.reason == .noCachedAd`) without a type per module.
    public struct Reason: Hashable, Sendable, CustomStringConvertible {
        /// Who defines it (`mars`, `banner`, `growthcat`).
        public let domain: String
        /// Its stable snake_case name within the domain.
        public let name: String

        /// Creates a reason. Adapters declare each once, as a static member.
        public init(domain: String, name: String) {
            self.domain = domain
            self.name = name
        }

        /// `"mars.bad_request"`.
        public var description: String { "\(domain).\(name)" }
    }

    /// What went wrong.
    public var code: Code
    /// A human-readable explanation. Never contains secrets.
    public var message: String
    /// The adapter's own detail, when it has one.
    public var reason: Reason?

    /// Creates an error.
    public init(_ code: Code, _ message: String, reason: Reason? = nil) {
        self.code = code
        self.message = message
        self.reason = reason
    }

    /// `"timeout: line 2 did not answer within 300 ms"`.
    public var description: String { "\(code.name): \(message)" }
}

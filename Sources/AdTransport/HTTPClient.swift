import Foundation

/// An HTTP method.
public struct HTTPMethod: Hashable, Sendable, RawRepresentable, CustomStringConvertible {
    /// The method token.
    public var rawValue: String
    /// Creates a method from its token.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// `GET`.
    public static let get = HTTPMethod(rawValue: "GET")
    /// `POST`.
    public static let post = HTTPMethod(rawValue: "POST")
    /// `PUT`.
    public static let put = HTTPMethod(rawValue: "PUT")
    /// `DELETE`.
    public static let delete = HTTPMethod(rawValue: "DELETE")
    /// `HEAD`.
    public static let head = HTTPMethod(rawValue: "HEAD")
    /// The token.
    public var description: String { rawValue }
}

/// Ordered HTTP header fields with case-insensitive lookup.
public struct HTTPHeaders: Hashable, Sendable, Sequence, ExpressibleByDictionaryLiteral {
    /// The fields in order, names as received.
    public private(set) var fields: [(name: String, value: String)]

    /// Creates headers from fields.
    public init(_ fields: [(String, String)] = []) {
        self.fields = fields.map { (name: $0.0, value: $0.1) }
    }

    /// Creates headers from a literal.
    public init(dictionaryLiteral elements: (String, String)...) {
        self.init(elements)
    }

    /// The first value of `name`, compared case-insensitively.
    public subscript(name: String) -> String? {
        fields.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    /// All values of `name`, compared case-insensitively.
    public func values(for name: String) -> [String] {
        fields.filter { $0.name.caseInsensitiveCompare(name) == .orderedSame }.map(\.value)
    }

    /// Appends a field.
    public mutating func add(name: String, value: String) {
        fields.append((name: name, value: value))
    }

    /// Replaces every field called `name` with one.
    public mutating func replaceOrAdd(name: String, value: String) {
        fields.removeAll { $0.name.caseInsensitiveCompare(name) == .orderedSame }
        fields.append((name: name, value: value))
    }

    /// Iterates the fields.
    public func makeIterator() -> some IteratorProtocol<(name: String, value: String)> { fields.makeIterator() }

    /// Equal when the same fields are in the same order.
    public static func == (lhs: HTTPHeaders, rhs: HTTPHeaders) -> Bool {
        lhs.fields.elementsEqual(rhs.fields) { $0.name == $1.name && $0.value == $1.value }
    }

    /// Hashes the fields.
    public func hash(into hasher: inout Hasher) {
        for field in fields {
            hasher.combine(field.name)
            hasher.combine(field.value)
        }
    }
}

/// An HTTP request.
public struct HTTPRequest: Hashable, Sendable {
    /// `base` without trailing slashes, followed by `path` (which starts with `/`).
    public static func url(_ base: String, appending path: String) -> String {
        var base = base
        while base.hasSuffix("/") { base.removeLast() }
        return base + path
    }

    /// The method.
    public var method: HTTPMethod
    /// The absolute URL.
    public var url: String
    /// Request headers.
    public var headers: HTTPHeaders
    /// The body, if any.
    public var body: Data?
    /// The whole request's deadline, measured from when it is sent (including any time queued); `nil` uses the
    /// client's default.
    public var timeout: Duration?
    /// The rule this request must meet wherever it goes: every transport checks it before it connects and at each
    /// redirect hop (after its own rule), so a URL that came from outside cannot reach a host its network's policy
    /// refuses. Every built-in adapter sets it on every request (its network's policy, derived once from its base
    /// URL); the conformance kit checks that an adapter does. `nil`: the transport's own rule only.
    public var destination: DestinationRule?

    /// Creates a request.
    public init(
        method: HTTPMethod = .get,
        url: String,
        headers: HTTPHeaders = [:],
        body: Data? = nil,
        timeout: Duration? = nil
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
    }
}

extension HTTPRequest {
    /// This request, required to meet `policy` as a URL of `kind` (see ``destination``).
    public func requiring(_ policy: DestinationPolicy, as kind: OutsideURLKind) -> HTTPRequest {
        var request = self
        request.destination = DestinationRule(policy: policy, kind: kind)
        return request
    }
}

/// The destination rule a request carries (``HTTPRequest/destination``): its network's policy and the kind of URL.
public struct DestinationRule: Sendable, Hashable {
    /// The policy the request's URL and every redirect hop must pass.
    public var policy: DestinationPolicy
    /// What the URL is (for messages and the refusal counter).
    public var kind: OutsideURLKind

    /// A rule.
    public init(policy: DestinationPolicy, kind: OutsideURLKind) {
        self.policy = policy
        self.kind = kind
    }
}

/// An HTTP response. Any status is a response; only transport failures throw.
public struct HTTPResponse: Hashable, Sendable {
    /// The status code.
    public var status: Int
    /// Response headers (of the final response after redirects), case-insensitive.
    public var headers: HTTPHeaders
    /// The body bytes, decoded from any content encoding.
    public var body: Data

    /// Creates a response.
    public init(status: Int, headers: HTTPHeaders = [:], body: Data = Data()) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// Whether the status is 2xx.
    public var isSuccess: Bool { (200..<300).contains(status) }

    /// `"HTTP 400 invalid_size: size must be …"` from the `{"error": {"code", "message"}}` body the ad contracts
    /// share, or `"HTTP 400"` when the body has another shape.
    public var errorSummary: String {
        struct Body: Decodable {
            struct E: Decodable {
                var code: String?
                var message: String?
            }
            var error: E
        }
        guard Self.errorBodyLimits.violation(in: body) == nil,
            let decoded = try? JSONDecoder().decode(Body.self, from: body)
        else { return "HTTP \(status)" }
        let code = String((decoded.error.code ?? "").prefix(64))
        let message = String((decoded.error.message ?? "").prefix(300))
        return "HTTP \(status) \(code): \(message)"
    }

    private static let errorBodyLimits = JSONLimits(maxBytes: 64 << 10, maxDepth: 8, maxStringBytes: 4096, maxItems: 64)

    /// The `Retry-After` header as a duration (delay-seconds form only, RFC 9110 §10.2.3): `nil` when absent, not a
    /// non-negative decimal integer, or an HTTP date; values over 7 days are clamped to 7 days.
    public var retryAfter: Duration? { Self.parseRetryAfter(headers["Retry-After"]) }

    /// Parses a `Retry-After` value as ``retryAfter`` does.
    public static func parseRetryAfter(_ value: String?) -> Duration? {
        guard let value else { return nil }
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty, trimmed.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
            return nil
        }
        // Any run of digits is valid; a value too long for Int64 is "very long" and clamps like any other.
        guard let seconds = Int64(trimmed) else { return OutsideValue.maximumDuration }
        return OutsideValue.duration(seconds: seconds)
    }
}

/// A transport failure: the request got no complete HTTP response.
public struct HTTPClientError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What failed. An open set (a struct, not an enum): a new code is not a breaking change, so a `switch` over
    /// codes ends with `default`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code as logs and reports spell it (`connection_refused`).
        public let rawValue: String
        private init(_ rawValue: String) { self.rawValue = rawValue }
        /// ``rawValue``.
        public var description: String { rawValue }

        /// The server refused the connection.
        public static let connectionRefused = Code("connection_refused")
        /// The host name did not resolve.
        public static let hostNotFound = Code("host_not_found")
        /// The connection could not be made for another reason (unreachable, connect timeout).
        public static let connectFailed = Code("connect_failed")
        /// The connection was reset or failed while sending or receiving.
        public static let connectionReset = Code("connection_reset")
        /// The server closed without sending a response.
        public static let emptyResponse = Code("empty_response")
        /// The body ended before its declared length.
        public static let truncatedBody = Code("truncated_body")
        /// The deadline passed.
        public static let timeout = Code("timeout")
        /// The response body is larger than the configured cap.
        public static let responseTooLarge = Code("response_too_large")
        /// The redirect limit was hit.
        public static let tooManyRedirects = Code("too_many_redirects")
        /// TLS failed (handshake, certificate verification).
        public static let tls = Code("tls")
        /// Plain `http://` to a non-loopback host without explicit permission, or an unsupported scheme.
        public static let insecureURL = Code("insecure_url")
        /// The URL is malformed.
        public static let invalidURL = Code("invalid_url")
        /// A header name is not a token, or a header value contains CR, LF or another control character; nothing was
        /// sent.
        public static let invalidHeader = Code("invalid_header")
        /// The response could not be parsed (bad status line, bad content encoding).
        public static let invalidResponse = Code("invalid_response")
        /// The caller cancelled, or the client shut down.
        public static let cancelled = Code("cancelled")
        /// Any other transport failure.
        public static let other = Code("other")
        /// An Oblivious HTTP relay or gateway refused the request (its status is in the message).
        public static let ohttpRelay = Code("ohttp_relay")
        /// The gateway's key configuration is missing, malformed or offers no supported suite.
        public static let ohttpKeyConfiguration = Code("ohttp_key_configuration")
        /// An encapsulated response did not decrypt or did not hold a binary HTTP response.
        public static let ohttpDecryption = Code("ohttp_decryption")
    }

    /// What failed.
    public var code: Code
    /// Details (libcurl's message and code, the URL's host). Never contains headers or bodies.
    public var message: String

    /// Creates an error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// `"timeout: …"`.
    public var description: String { "\(code.rawValue): \(message)" }
}

/// Sends HTTP requests. Adapters depend on this protocol only; `CurlHTTPClient` and `URLSessionHTTPClient` implement
/// it.
public protocol HTTPClient: Sendable {
    /// Sends `request` and returns the response, whatever its status. Throws ``HTTPClientError`` for transport
    /// failures, with ``HTTPClientError/Code/cancelled`` when the calling task is cancelled.
    func send(_ request: HTTPRequest) async throws -> HTTPResponse
}

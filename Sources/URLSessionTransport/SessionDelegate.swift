import AdMediation
import AdTransport
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One transfer's outcome, settled exactly once: by the session (completion, size cap), the deadline, the caller's
/// cancellation or shutdown, whichever comes first.
final class TransferState: Sendable {
    private struct Inner {
        var continuation: CheckedContinuation<HTTPResponse, any Error>?
        var outcome: Result<HTTPResponse, HTTPClientError>?
        var settled = false
        var body = Data()
        var checkedHead = false
    }

    let label: String
    let timeout: Duration
    private let inner = LockedValue(Inner())

    init(label: String, timeout: Duration) {
        self.label = label
        self.timeout = timeout
    }

    /// Hands over the caller's continuation; resumes it at once when the transfer is already settled.
    func install(_ continuation: CheckedContinuation<HTTPResponse, any Error>) {
        let outcome = inner.withLock { inner -> Result<HTTPResponse, HTTPClientError>? in
            if let outcome = inner.outcome {
                inner.outcome = nil
                return outcome
            }
            inner.continuation = continuation
            return nil
        }
        if let outcome { continuation.resume(with: outcome.mapError { $0 as any Error }) }
    }

    /// Settles the transfer with `error`; false when it was already settled.
    @discardableResult
    func fail(_ error: HTTPClientError) -> Bool { settle(.failure(error)) }

    /// Settles the transfer; false when it was already settled.
    @discardableResult
    func settle(_ outcome: Result<HTTPResponse, HTTPClientError>) -> Bool {
        let continuation = inner.withLock { inner -> CheckedContinuation<HTTPResponse, any Error>?? in
            guard !inner.settled else { return .none }
            inner.settled = true
            inner.body = Data()
            guard let continuation = inner.continuation else {
                inner.outcome = outcome
                return .some(nil)
            }
            inner.continuation = nil
            return .some(continuation)
        }
        guard let continuation else { return false }
        continuation?.resume(with: outcome.mapError { $0 as any Error })
        return true
    }

    /// Appends body bytes; false (and the transfer settled with `responseTooLarge`) past `maxBytes`.
    func append(_ data: Data, maxBytes: Int) -> Bool {
        let fits = inner.withLock { inner -> Bool? in
            guard !inner.settled else { return nil }
            let (total, overflow) = inner.body.count.addingReportingOverflow(data.count)
            guard !overflow, total <= maxBytes else { return false }
            inner.body.append(data)
            return true
        }
        guard let fits else { return false }
        if !fits { fail(HTTPClientError(.responseTooLarge, "\(label): response body exceeds \(maxBytes) bytes")) }
        return fits
    }

    /// Whether the head was already checked (the first call returns false and marks it).
    func claimHeadCheck() -> Bool {
        inner.withLock { inner in
            defer { inner.checkedHead = true }
            return inner.checkedHead
        }
    }

    /// The body received so far.
    var body: Data { inner.withLock { $0.body } }
}

/// The session's delegate: routes each task's callbacks to its ``TransferState``, refuses URLSession's own redirect
/// following, and applies the size caps as bytes arrive.
///
/// Sendable: its only stored state is immutable or inside a `LockedValue`.
final class SessionDelegate: NSObject, URLSessionDataDelegate, Sendable {
    private struct Registry {
        var states: [Int: TransferState] = [:]
        var shutDown = false
    }

    private let registry = LockedValue(Registry())
    let maxBytes: Int
    let maxHeaderCount: Int
    let maxHeaderBytes: Int

    init(maxBytes: Int, maxHeaderCount: Int, maxHeaderBytes: Int) {
        self.maxBytes = maxBytes
        self.maxHeaderCount = maxHeaderCount
        self.maxHeaderBytes = maxHeaderBytes
    }

    /// Creates the task for `request` and registers `state`; nil once the client is shut down.
    func start(_ state: TransferState, session: URLSession, request: URLRequest) -> URLSessionDataTask? {
        registry.withLock { registry -> URLSessionDataTask? in
            guard !registry.shutDown else { return nil }
            let task = session.dataTask(with: request)
            registry.states[task.taskIdentifier] = state
            return task
        }
    }

    /// Refuses new tasks and fails every registered one with `cancelled`.
    func shutDown() {
        let states = registry.withLock { registry -> [TransferState] in
            registry.shutDown = true
            defer { registry.states.removeAll() }
            return Array(registry.states.values)
        }
        for state in states { state.fail(HTTPClientError(.cancelled, "the client is shut down")) }
    }

    var activeCount: Int { registry.withLock { $0.states.count } }

    private func state(of task: URLSessionTask) -> TransferState? {
        registry.withLock { $0.states[task.taskIdentifier] }
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        // The redirect response itself is the answer: the client follows it under its own rule.
        completionHandler(nil)
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        guard let state = state(of: dataTask) else { return completionHandler(.cancel) }
        if let failure = checkHead(response, state: state) {
            state.fail(failure)
            return completionHandler(.cancel)
        }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        guard let state = state(of: dataTask) else { return }
        if let response = dataTask.response, let failure = checkHead(response, state: state) {
            state.fail(failure)
            dataTask.cancel()
            return
        }
        if !state.append(data, maxBytes: maxBytes) { dataTask.cancel() }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let state = registry.withLock({ $0.states.removeValue(forKey: task.taskIdentifier) }) else { return }
        if let error {
            state.fail(Self.map(error, label: state.label, gotResponse: task.response != nil))
            return
        }
        guard let response = task.response as? HTTPURLResponse else {
            state.fail(HTTPClientError(.invalidResponse, "\(state.label): not an HTTP response"))
            return
        }
        if let failure = checkHead(response, state: state) {
            state.fail(failure)
            return
        }
        let headers = Self.headers(of: response)
        let body = state.body
        // URLSession ends a body cut short by a clean close as a success; a declared length not reached (on an
        // identity-encoded body, whose received size is comparable) is a truncated body, as with libcurl.
        if let declared = headers["Content-Length"].flatMap(Int.init), headers["Content-Encoding"] == nil,
            body.count < declared, task.originalRequest?.httpMethod != "HEAD"
        {
            state.fail(HTTPClientError(.truncatedBody, "\(state.label): \(body.count) of \(declared) body bytes"))
            return
        }
        state.settle(.success(HTTPResponse(status: response.statusCode, headers: headers, body: body)))
    }

    /// The head's caps (field count and bytes, a declared length over the body cap), checked once per transfer.
    private func checkHead(_ response: URLResponse, state: TransferState) -> HTTPClientError? {
        guard !state.claimHeadCheck(), let http = response as? HTTPURLResponse else { return nil }
        var count = 0
        var bytes = 0
        for (name, value) in http.allHeaderFields {
            count += 1
            bytes = bytes &+ "\(name)".utf8.count &+ "\(value)".utf8.count &+ 4
        }
        if count > maxHeaderCount || bytes > maxHeaderBytes {
            return HTTPClientError(
                .responseTooLarge,
                "\(state.label): response headers exceed \(maxHeaderCount) fields or \(maxHeaderBytes) bytes")
        }
        if response.expectedContentLength > Int64(maxBytes) {
            return HTTPClientError(.responseTooLarge, "\(state.label): response body exceeds \(maxBytes) bytes")
        }
        return nil
    }

    /// The response's fields, sorted by name (URLSession keeps neither their order nor repeated fields apart).
    static func headers(of response: HTTPURLResponse) -> HTTPHeaders {
        var fields: [(String, String)] = []
        for (name, value) in response.allHeaderFields {
            fields.append(("\(name)", "\(value)"))
        }
        fields.sort { $0.0.lowercased() < $1.0.lowercased() }
        return HTTPHeaders(fields)
    }

    /// Maps a URLSession error onto the transport's codes.
    static func map(_ error: any Error, label: String, gotResponse: Bool) -> HTTPClientError {
        let nsError = error as NSError
        let message = "\(label): \(nsError.localizedDescription) (URLError \(nsError.code))"
        guard nsError.domain == NSURLErrorDomain else { return HTTPClientError(.other, message) }
        switch URLError.Code(rawValue: nsError.code) {
        case .cancelled: return HTTPClientError(.cancelled, message)
        case .timedOut: return HTTPClientError(.timeout, message)
        case .cannotFindHost, .dnsLookupFailed: return HTTPClientError(.hostNotFound, message)
        case .cannotConnectToHost: return HTTPClientError(.connectionRefused, message)
        case .notConnectedToInternet, .internationalRoamingOff, .dataNotAllowed, .callIsActive:
            return HTTPClientError(.connectFailed, message)
        case .networkConnectionLost:
            return HTTPClientError(gotResponse ? .connectionReset : .emptyResponse, message)
        case .zeroByteResource: return HTTPClientError(.emptyResponse, message)
        case .badServerResponse:
            return HTTPClientError(gotResponse ? .invalidResponse : .emptyResponse, message)
        case .cannotDecodeRawData, .cannotDecodeContentData, .cannotParseResponse:
            return HTTPClientError(.invalidResponse, message)
        case .dataLengthExceedsMaximum: return HTTPClientError(.responseTooLarge, message)
        case .httpTooManyRedirects, .redirectToNonExistentLocation: return HTTPClientError(.tooManyRedirects, message)
        case .secureConnectionFailed, .serverCertificateHasBadDate, .serverCertificateUntrusted,
            .serverCertificateHasUnknownRoot, .serverCertificateNotYetValid, .clientCertificateRejected,
            .clientCertificateRequired:
            return HTTPClientError(.tls, message)
        case .appTransportSecurityRequiresSecureConnection: return HTTPClientError(.insecureURL, message)
        // The request URL passed the transport's rule before it was sent, so an unsupported URL after that is the
        // server's reply: a status line that is not HTTP/1.x (FoundationNetworking reports libcurl's
        // CURLE_UNSUPPORTED_PROTOCOL so).
        case .unsupportedURL: return HTTPClientError(.invalidResponse, message)
        case .badURL: return HTTPClientError(.invalidURL, message)
        default: return HTTPClientError(classifyUnknown(nsError.localizedDescription), message)
        }
    }

    /// FoundationNetworking reports several libcurl failures as `NSURLErrorUnknown` with libcurl's message; the
    /// message is the only thing that tells them apart (Apple platforms give each its own code).
    static func classifyUnknown(_ text: String) -> HTTPClientError.Code {
        let text = text.lowercased()
        if text.contains("ssl") || text.contains("tls") || text.contains("certificate") { return .tls }
        if text.contains("transfer closed with") || text.contains("partial file") { return .truncatedBody }
        if text.contains("empty reply") { return .emptyResponse }
        if text.contains("recv failure") || text.contains("send failure") || text.contains("connection reset") {
            return .connectionReset
        }
        if text.contains("weird server reply") || text.contains("unsupported protocol") { return .invalidResponse }
        return .other
    }
}

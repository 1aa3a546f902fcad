import AdMediation
import AdTransport
import AdapterKit
import AdapterSupport
import Foundation

/// The client's requests. Each attempt goes through AdapterKit's ``RequestRunner``, which puts the attempt's deadline
/// on the request (the ``HTTPClient`` enforces it), sends nothing from a cancelled task and maps a transport failure
/// once, by GrowthCat's own table (``transportFailure(_:_:)``). The seed's status table and retry rules (section
/// 17) stay here: every answer is returned whatever its status, and only a 5xx (or, when asked, a timeout) is retried.
extension GrowthCatClient {
    // MARK: HTTP

    /// Marks a timeout of the caller's own deadline (a load's or a reward validation's budget), as opposed to one
    /// request outliving `requestTimeout`: a load reports it as a timeout, never as "the network is unavailable".
    static let deadlineReason = AdError.Reason(domain: "growthcat", name: "deadline")

    /// Marks a transport failure after the connection was made — reset, closed without an answer, or a body cut
    /// short: the request may have reached the server and been processed, and only its answer was lost. The network
    /// is there (unlike a refused or unreachable connection), so a reward validation retries it with the same
    /// `sdk_event_id`, which the server answers with its first answer (issue 43 item 7).
    static let answerLostReason = AdError.Reason(domain: "growthcat", name: "answer_lost")

    /// One attempt: the API key, the SDK header and `Accept` on every request, `Content-Type` with a body, within
    /// `timeout` (at most `requestTimeout`). A failure without an answer marks the client offline when it is one of
    /// connectivity (``AdError/Code/network`` or ``AdError/Code/timeout``); any answer marks it online again.
    func request(
        _ method: HTTPMethod, _ path: String, query: [(String, String)] = [], body: Data? = nil,
        timeout: Duration? = nil
    ) async throws(AdError) -> HTTPResponse {
        var url = HTTPRequest.url(configuration.baseURL, appending: path)
        if !query.isEmpty { url += "?" + QueryString.encode(query) }
        var headers: HTTPHeaders = [
            "Authorization": "Bearer \(configuration.apiKey)", "X-GrowthCat-SDK": "swift/1.0",
            "Accept": "application/json",
        ]
        if body != nil { headers.add(name: "Content-Type", value: "application/json; charset=utf-8") }
        let runner = RequestRunner(http: http, transportFailure: Self.transportFailure(method, path))
        do {
            let response = try await runner.response(
                to: HTTPRequest(method: method, url: url, headers: headers, body: body)
                    .requiring(destinations, as: .api),
                deadline: timeout.map { min($0, configuration.requestTimeout) } ?? configuration.requestTimeout)
            if isOffline { wentOnline() }
            return response
        } catch let error as AdError {
            if error.code == .network || error.code == .timeout { wentOffline() }
            throw error
        } catch {
            throw AdError(.network, "\(method) \(path): \(error)")
        }
    }

    /// GrowthCat's transport table (the seed: "transport failure → `.network`; events go to the offline queue"): an
    /// unreadable answer is ``AdError/Code/invalidResponse`` and a refused URL, header or TLS peer is
    /// ``AdError/Code/configuration`` (the server or the setup, never taken for "offline"); a timeout stays a timeout;
    /// every other failure is ``AdError/Code/network`` — a reset, a close without an answer or a cut body with
    /// ``answerLostReason``.
    static func transportFailure(_ method: HTTPMethod, _ path: String) -> RequestRunner.TransportFailure {
        { error in
            switch error.code {
            case .cancelled:
                AdError(.cancelled, "\(method) \(path) was cancelled")
            case .responseTooLarge, .invalidResponse:
                AdError(.invalidResponse, "\(method) \(path): \(error.code.rawValue)")
            case .tls, .insecureURL, .invalidURL, .invalidHeader:
                AdError(.configuration, "\(method) \(path): \(error.code.rawValue): \(error.message)")
            case .connectionReset, .emptyResponse, .truncatedBody:
                AdError(.network, "\(method) \(path): \(error.code.rawValue)", reason: Self.answerLostReason)
            default:
                AdError(error.code == .timeout ? .timeout : .network, "\(method) \(path): \(error.code.rawValue)")
            }
        }
    }

    /// Sends a request, retrying a 5xx answer (and, when `retryLostAnswers`, a timeout or an answer lost after the
    /// connection was made: ``answerLostReason``) with exponential back-off from `retryBaseDelay`, at most
    /// `maxServerRetries` times, and only while the next attempt can start before `deadline` (each attempt's own
    /// timeout ends there too). A connection that cannot be made is never retried. Every attempt is returned, in
    /// order. A failure without an answer is thrown (its message lists the attempts); a final non-2xx answer is
    /// returned for the caller's status rules. An attempt that times out at the deadline (not at `requestTimeout`)
    /// carries ``deadlineReason``.
    func requestRetrying(
        _ method: HTTPMethod, _ path: String, query: [(String, String)] = [], body: Data? = nil,
        deadline: AdInstant?, retryLostAnswers: Bool = false
    ) async throws(AdError) -> (response: HTTPResponse, attempts: [GrowthCatRequestAttempt]) {
        let started = clock.now
        var attempts: [GrowthCatRequestAttempt] = []
        var attemptStarted = started
        while true {
            // The first attempt always runs (bounded by the request timeout when the deadline has already passed);
            // a retry starts only before the deadline (`canRetry`).
            let left = deadline.map { $0 - clock.now }.flatMap { $0 > .zero ? $0 : nil }
            // Whether this attempt's timeout is what is left of the deadline rather than `requestTimeout`.
            let boundByDeadline = left.map { $0 < configuration.requestTimeout } ?? false
            var retryable: Bool
            do {
                attemptStarted = clock.now
                let response = try await request(method, path, query: query, body: body, timeout: left)
                attempts.append(GrowthCatRequestAttempt(status: response.status, error: nil, at: clock.now - started))
                guard (500..<600).contains(response.status) else { return (response, attempts) }
                retryable = true
                if attempts.count > configuration.maxServerRetries
                    || !canRetry(before: deadline, attempts.count, lasting: clock.now - attemptStarted)
                {
                    return (response, attempts)
                }
            } catch {
                attempts.append(GrowthCatRequestAttempt(status: nil, error: error.code.name, at: clock.now - started))
                retryable = retryLostAnswers && (error.code == .timeout || error.reason == Self.answerLostReason)
                guard retryable, attempts.count <= configuration.maxServerRetries,
                    canRetry(before: deadline, attempts.count, lasting: clock.now - attemptStarted)
                else {
                    let reason = boundByDeadline && error.code == .timeout ? Self.deadlineReason : error.reason
                    throw AdError(error.code, "\(error.message) \(Self.summary(attempts))", reason: reason)
                }
            }
            logger.info(
                "retrying after a failed attempt",
                metadata: [
                    "path": "\(path)", "attempt": "\(attempts.count)", "outcome": "\(attempts[attempts.count - 1])",
                ])
            do { try await clock.sleep(for: retryDelay(afterAttempts: attempts.count)) } catch {
                throw AdError(.cancelled, "\(method) \(path) was cancelled during its back-off")
            }
        }
    }

    func retryDelay(afterAttempts attempts: Int) -> Duration {
        configuration.retryBaseDelay * (1 << min(max(0, attempts - 1), 20))
    }

    /// Whether a retry after its back-off, lasting as long as the attempt before it, still ends before `deadline`.
    func canRetry(before deadline: AdInstant?, _ attempts: Int, lasting: Duration) -> Bool {
        guard let deadline else { return true }
        return clock.now + retryDelay(afterAttempts: attempts) + lasting < deadline
    }

    static func summary(_ attempts: [GrowthCatRequestAttempt]) -> String {
        "(\(attempts.count) attempt\(attempts.count == 1 ? "" : "s"): "
            + attempts.map { $0.status.map(String.init) ?? $0.error ?? "?" }.joined(separator: ", ") + ")"
    }

    /// The seed's status table for anything but 2xx (404 on catalog/serve is handled by the caller): 400 and 403
    /// throw `.server` (seed section 17: "400 Throw .server. Do not retry.", "403 Throw .server. Discard the
    /// request."), not the taxonomy's `badRequest` and `forbidden`; 401, 429 and 5xx as `AdError.http` maps them.
    static func statusError(_ response: HTTPResponse, _ what: String) -> AdError {
        let message = "\(what): \(response.errorSummary)"
        switch response.status {
        case 400, 403: return AdError(.server(status: response.status), message)
        default: return AdError.http(status: response.status, retryAfter: response.retryAfter, message: message)
        }
    }
}

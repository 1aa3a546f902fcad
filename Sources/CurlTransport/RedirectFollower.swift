import AdMediation
import Foundation

/// Follows redirects one hop at a time (libcurl's own following is off), so that every hop obeys the same rule as
/// the request URL and credentials stay with their origin:
///
/// - `301`, `302`, `303`, `307` and `308` with a `Location` are followed, at most
///   ``CurlHTTPClient/Configuration/maxRedirects`` times (then `tooManyRedirects`); with 0 the redirect response is
///   returned. Other statuses, and a redirect without `Location`, are returned as they are.
/// - Each hop's URL passes the transport's rule (`insecureURL`/`invalidURL` otherwise: odd address forms such as
///   `2130706433` or `[::ffff:127.0.0.1]`, `0.0.0.0`, other schemes, plain http off loopback) and may not step
///   inward: from a public host to a loopback, private or link-local one is refused (`insecureURL`).
/// - `303`, and `301`/`302` after a `POST`, continue as `GET` without the body (as browsers and libcurl do).
/// - To another origin (scheme, host or port), only `Accept` and `Accept-Language` go along: `Authorization`,
///   cookies, API keys, signatures and app ids never do. A `307`/`308` that would carry a body to another origin is
///   not followed: the redirect response is returned.
/// - The whole chain shares the request's deadline.
struct RedirectFollower: Sendable {
    /// Header names (lower-cased) that may go to another origin.
    static let crossOriginHeaders: Set<String> = ["accept", "accept-language"]
    static let followed: Set<Int> = [301, 302, 303, 307, 308]

    var maxRedirects: Int
    var allowInsecureHTTP: Bool
    var defaultTimeout: Duration

    init(configuration: CurlHTTPClient.Configuration) {
        maxRedirects = max(0, configuration.maxRedirects)
        allowInsecureHTTP = configuration.allowInsecureHTTP
        defaultTimeout = configuration.defaultTimeout
    }

    /// Sends `request` through `send` (one transfer, no following) and follows its redirects.
    func send(
        _ request: HTTPRequest, through send: (HTTPRequest) async throws -> HTTPResponse
    ) async throws -> HTTPResponse {
        let timeout = request.timeout ?? defaultTimeout
        let start = ContinuousClock.now
        var current = request
        current.timeout = timeout
        var hops = 0
        while true {
            let response = try await send(current)
            guard maxRedirects > 0, Self.followed.contains(response.status), let location = response.headers["Location"]
            else { return response }
            guard hops < maxRedirects else {
                throw HTTPClientError(.tooManyRedirects, "more than \(maxRedirects) redirects")
            }
            hops += 1
            guard let next = try nextRequest(after: current, status: response.status, location: location) else {
                return response
            }
            let left = timeout - (ContinuousClock.now - start)
            guard left > .zero else {
                throw HTTPClientError(.timeout, "the redirects did not complete within \(Int(timeout.milliseconds)) ms")
            }
            current = next
            current.timeout = left
        }
    }

    /// The request for the hop to `location` after `status`; nil when it must not be followed (a body to another
    /// origin). Throws when the hop's URL breaks the rule.
    func nextRequest(after request: HTTPRequest, status: Int, location: String) throws -> HTTPRequest? {
        guard let base = URL(string: request.url),
            let resolved = URL(string: location.trimmingCharacters(in: .whitespaces), relativeTo: base)?.absoluteString
        else {
            throw HTTPClientError(.invalidURL, "a redirect's Location is not a URL")
        }
        let from = try CurlEngine.destination(request.url, allowInsecureHTTP: allowInsecureHTTP)
        let to: URLDestination
        do {
            to = try CurlEngine.destination(resolved, allowInsecureHTTP: allowInsecureHTTP)
        } catch let error as HTTPClientError {
            throw HTTPClientError(error.code, "redirect from \(from.host) refused: \(error.message)")
        }
        if from.destinationClass == .public && to.destinationClass != .public {
            throw HTTPClientError(
                .insecureURL,
                "redirect from \(from.host) to \(to.destinationClass.rawValue) \(to.host) refused: "
                    + "a public host may not send a request inward")
        }
        var next = request
        next.url = resolved
        let dropsBody = status == 303 || ((status == 301 || status == 302) && request.method == .post)
        if dropsBody {
            if next.method != .head { next.method = .get }
            next.body = nil
            next.headers = HTTPHeaders(
                request.headers.fields.filter {
                    !["content-type", "content-length", "content-encoding"].contains($0.name.lowercased())
                }.map { ($0.name, $0.value) })
        }
        guard from.origin != to.origin else { return next }
        if next.body != nil { return nil }
        next.headers = HTTPHeaders(
            next.headers.fields.filter { Self.crossOriginHeaders.contains($0.name.lowercased()) }.map {
                ($0.name, $0.value)
            })
        return next
    }
}

import Foundation

/// The rules every ``HTTPClient`` of the project applies before and between transfers, shared by the transports
/// (libcurl, URLSession) so that they cannot drift apart: which URLs may be requested, which header fields may be
/// sent, and how redirects are followed.
package enum TransportRules {
    /// Parses and checks `urlString` under the transport's rule: `https` anywhere; plain `http` to loopback, or
    /// anywhere with `allowInsecureHTTP`; never another scheme, a user name in the URL, an IP address in an odd form
    /// (`2130706433`, `[::ffff:127.0.0.1]`) or a reserved one (`0.0.0.0`). The URL is parsed by ``URLDestination``,
    /// the parser of the destination policy.
    package static func destination(_ urlString: String, allowInsecureHTTP: Bool) throws -> URLDestination {
        let destination: URLDestination
        do throws(DestinationRefusal) {
            destination = try URLDestination(parsing: urlString)
        } catch {
            switch error.code {
            case .scheme: throw HTTPClientError(.insecureURL, "unsupported URL scheme: \(error.message)")
            case .credentialsInURL: throw HTTPClientError(.insecureURL, error.message)
            default: throw HTTPClientError(.invalidURL, "not an absolute URL with a host: \(error.message)")
            }
        }
        if destination.isOddAddressForm {
            throw HTTPClientError(
                .insecureURL, "the address \(destination.host) is written in an odd form; only plain forms are allowed")
        }
        if destination.destinationClass == .unspecified || destination.destinationClass == .reserved {
            throw HTTPClientError(
                .insecureURL, "\(destination.host) is a \(destination.destinationClass.rawValue) address")
        }
        if destination.scheme == "http" && destination.destinationClass != .loopback && !allowInsecureHTTP {
            throw HTTPClientError(
                .insecureURL, "plain http:// to \(destination.host) is refused; use https or set allowInsecureHTTP")
        }
        return destination
    }

    /// Refuses header names that are not RFC 9110 tokens and values with CR, LF, NUL or other control characters
    /// (tab allowed), before they can reach the transport and split or smuggle a request.
    package static func validateHeaders(_ headers: HTTPHeaders) throws {
        for field in headers {
            guard !field.name.isEmpty, field.name.utf8.allSatisfy(isTokenByte) else {
                throw HTTPClientError(.invalidHeader, "header name \"\(printable(field.name))\" is not a token")
            }
            guard field.value.utf8.allSatisfy({ $0 == 0x09 || ($0 >= 0x20 && $0 != 0x7F) }) else {
                throw HTTPClientError(.invalidHeader, "the value of header \(field.name) contains a control character")
            }
        }
    }

    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default:
            "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }

    private static func printable(_ text: String) -> String {
        String(text.unicodeScalars.prefix(40).map { $0.value < 0x20 || $0.value == 0x7F ? "?" : Character($0) })
    }
}

/// Follows redirects one hop at a time (the underlying engine's own following is off), so that every hop obeys the
/// same rule as the request URL and credentials stay with their origin:
///
/// - `301`, `302`, `303`, `307` and `308` with a `Location` are followed, at most `maxRedirects` times (then
///   `tooManyRedirects`); with 0 the redirect response is returned. Other statuses, and a redirect without
///   `Location`, are returned as they are.
/// - The request's URL and each hop's meet the request's ``HTTPRequest/destination`` rule when it carries one
///   (the adapter's network policy; `insecureURL` otherwise).
/// - Each hop's URL passes ``TransportRules/destination(_:allowInsecureHTTP:)`` (`insecureURL`/`invalidURL`
///   otherwise) and may not step inward: from a public host to a loopback, private or link-local one, or from one
///   inward class to another (a loopback origin to a private address), is refused (`insecureURL`).
/// - `303`, and `301`/`302` after a `POST`, continue as `GET` without the body (as browsers and libcurl do).
/// - To another origin (scheme, host or port), only `Accept` and `Accept-Language` go along: `Authorization`,
///   cookies, API keys, signatures and app ids never do. A `307`/`308` that would carry a body to another origin is
///   not followed: the redirect response is returned.
/// - The whole chain shares the request's deadline.
package struct RedirectFollower: Sendable {
    /// Header names (lower-cased) that may go to another origin.
    package static let crossOriginHeaders: Set<String> = ["accept", "accept-language"]
    /// The statuses followed.
    package static let followed: Set<Int> = [301, 302, 303, 307, 308]

    /// Redirects followed before `tooManyRedirects`; 0 returns the redirect response.
    package var maxRedirects: Int
    /// Plain `http` to hosts other than loopback is allowed.
    package var allowInsecureHTTP: Bool
    /// The deadline of a request that does not set its own.
    package var defaultTimeout: Duration

    /// A follower with the client's settings.
    package init(maxRedirects: Int, allowInsecureHTTP: Bool, defaultTimeout: Duration) {
        self.maxRedirects = max(0, maxRedirects)
        self.allowInsecureHTTP = allowInsecureHTTP
        self.defaultTimeout = defaultTimeout
    }

    /// Sends `request` through `send` (one transfer, no following) and follows its redirects.
    package func send(
        _ request: HTTPRequest, through send: (HTTPRequest) async throws -> HTTPResponse
    ) async throws -> HTTPResponse {
        let timeout = request.timeout ?? defaultTimeout
        let start = ContinuousClock.now
        var current = request
        current.timeout = timeout
        try Self.checkRule(of: request, url: request.url)
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

    /// Checks `url` (the request's own URL or a redirect hop) against the request's ``HTTPRequest/destination``
    /// rule, if it carries one; a refusal is logged, counted and thrown as `insecureURL`.
    static func checkRule(of request: HTTPRequest, url: String) throws {
        guard let rule = request.destination else { return }
        do throws(DestinationRefusal) {
            try rule.policy.check(url, as: rule.kind)
        } catch {
            DestinationPolicy.record(error, kind: rule.kind, network: "transport")
            throw HTTPClientError(.insecureURL, "refused by the request's destination rule: \(error.message)")
        }
    }

    /// The request for the hop to `location` after `status`; nil when it must not be followed (a body to another
    /// origin). Throws when the hop's URL breaks the rule.
    package func nextRequest(after request: HTTPRequest, status: Int, location: String) throws -> HTTPRequest? {
        guard let base = URL(string: request.url),
            let resolved = URL(string: location.trimmingCharacters(in: .whitespaces), relativeTo: base)?.absoluteString
        else {
            throw HTTPClientError(.invalidURL, "a redirect's Location is not a URL")
        }
        let from = try TransportRules.destination(request.url, allowInsecureHTTP: allowInsecureHTTP)
        let to: URLDestination
        do {
            to = try TransportRules.destination(resolved, allowInsecureHTTP: allowInsecureHTTP)
        } catch let error as HTTPClientError {
            throw HTTPClientError(error.code, "redirect from \(from.host) refused: \(error.message)")
        }
        // Never inward, and never sideways between inward classes: a public host may send a request only to public
        // hosts; a loopback origin (development) to loopback or public ones, a private one to private or public
        // ones — never to a class the origin's own rule would refuse asked directly.
        if to.destinationClass != .public && to.destinationClass != from.destinationClass {
            throw HTTPClientError(
                .insecureURL,
                "redirect from \(from.destinationClass.rawValue) \(from.host) to \(to.destinationClass.rawValue) "
                    + "\(to.host) refused: a redirect may not step inward or to another inward class")
        }
        try Self.checkRule(of: request, url: resolved)
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

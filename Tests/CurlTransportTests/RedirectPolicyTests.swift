import AdMediation
import AdMediationTesting
import AdTransport
import CurlTransport
import Foundation
import TestSupport
import Testing

/// A second loopback server that records what reaches it (the "other local service").
final class RecordingTarget: Sendable {
    /// The requests received, shared with the server's handler.
    final class Log: Sendable {
        let list = LockedValue<[LoopbackHTTPServer.Request]>([])
    }

    let server: LoopbackHTTPServer
    private let log: Log

    init() throws {
        let log = Log()
        self.log = log
        server = try LoopbackHTTPServer { request in
            log.list.withLock { $0.append(request) }
            return .respond(.text("admin"))
        }
    }

    var requests: [LoopbackHTTPServer.Request] { log.list.withLock { $0 } }
    deinit { server.stop() }
}

/// The transport's destination rule on request URLs and on every redirect hop; credentials and bodies stay with
/// their origin (issue 31 items 4, 5).
@Suite("Redirect and destination policy", .timeLimit(.minutes(1)))
struct RedirectPolicyTests {
    /// The odd spellings of 127.0.0.1 (and 0.0.0.0) that curl and getaddrinfo accept.
    @Test(arguments: TransportKind.allCases, ["[::ffff:127.0.0.1]", "2130706433", "0.0.0.0", "0x7f.1", "127.1"])
    func aRedirectToAnOddLoopbackSpellingIsRefusedAndNothingReachesIt(kind: TransportKind, host: String) async throws {
        let admin = try RecordingTarget()
        let location = "http://\(host):\(admin.server.port)/admin/delete"
        try await withServer(kind, .init(), { _ in .respond(.init(status: 302, headers: [("Location", location)])) }) {
            server, client in
            let error = await transportError {
                try await client.send(HTTPRequest(url: server.baseURL + "/notice", timeout: .seconds(60)))
            }
            #expect(error?.code == .insecureURL)
            #expect(admin.requests.isEmpty)
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aRequestToANameStartingWith127IsNotTreatedAsLoopback(kind: TransportKind) async throws {
        let client = kind.make()
        let error = await transportError {
            try await client.send(HTTPRequest(url: "http://127.attacker.invalid/admin", timeout: .seconds(60)))
        }
        // Plain http to a name that is not loopback: refused before any DNS lookup (hostNotFound would mean it was
        // looked up).
        #expect(error?.code == .insecureURL)
        await client.shutdown()
    }

    @Test(
        arguments: TransportKind.allCases,
        [
            "http://2130706433/", "http://0.0.0.0:1/", "http://[::ffff:127.0.0.1]:1/", "http://u:p@127.0.0.1/",
        ])
    func aRequestURLWithAnOddOrReservedAddressIsRefused(kind: TransportKind, url: String) async throws {
        let client = kind.make()
        let error = await transportError { try await client.send(HTTPRequest(url: url, timeout: .seconds(60))) }
        #expect(error?.code == .insecureURL)
        await client.shutdown()
    }

    @Test(arguments: TransportKind.allCases)
    func aTemporaryRedirectToAnotherOriginDoesNotForwardTheSignedBodyOrHeaders(kind: TransportKind) async throws {
        let other = try RecordingTarget()
        try await withServer(
            kind, .init(),
            { _ in
                .respond(.init(status: 307, headers: [("Location", other.server.baseURL + "/collect")]))
            }
        ) { server, client in
            let response = try await client.send(
                HTTPRequest(
                    method: .post, url: server.baseURL + "/banner/v1/load",
                    headers: ["X-CB-App-Id": "app-1", "X-CB-Signature": "f00d", "Authorization": "Bearer k"],
                    body: Data(#"{"secret":"body"}"#.utf8), timeout: .seconds(60)))
            #expect(response.status == 307)
            #expect(other.requests.isEmpty)
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aRedirectToAnotherOriginCarriesNoCredentialHeaders(kind: TransportKind) async throws {
        let other = try RecordingTarget()
        try await withServer(
            kind, .init(),
            { _ in
                .respond(.init(status: 302, headers: [("Location", other.server.baseURL + "/pixel")]))
            }
        ) { server, client in
            let response = try await client.send(
                HTTPRequest(
                    url: server.baseURL + "/track",
                    headers: [
                        "X-CB-App-Id": "app-1", "X-CB-Signature": "f00d", "Authorization": "Bearer k",
                        "X-API-Key": "k", "Accept": "image/png",
                    ], timeout: .seconds(60)))
            #expect(response.status == 200)
            let request = try #require(other.requests.first)
            for name in ["X-CB-App-Id", "X-CB-Signature", "Authorization", "X-API-Key"] {
                #expect(request.header(name) == nil, "\(name) crossed to another origin")
            }
            #expect(request.header("Accept") == "image/png")
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aRedirectWithinTheSameOriginKeepsHeadersAndA307KeepsTheBody(kind: TransportKind) async throws {
        let seen = LockedValue<[LoopbackHTTPServer.Request]>([])
        try await withServer(
            kind, .init(),
            { request in
                seen.withLock { $0.append(request) }
                return request.path == "/end"
                    ? .respond(.text("ok")) : .respond(.init(status: 307, headers: [("Location", "/end")]))
            }
        ) { server, client in
            let response = try await client.send(
                HTTPRequest(
                    method: .post, url: server.baseURL + "/start", headers: ["X-CB-Signature": "f00d"],
                    body: Data("payload".utf8), timeout: .seconds(60)))
            #expect(response.status == 200)
            let last = try #require(seen.withLock { $0.last })
            #expect(last.path == "/end" && last.method == "POST")
            #expect(last.header("X-CB-Signature") == "f00d")
            #expect(last.body == Array("payload".utf8))
        }
    }

    /// Issue 45: from a loopback origin (development) a redirect to a private https address was followed (only
    /// public → inward was refused). A redirect never goes to a class the origin's rule would refuse asked directly.
    @Test(arguments: TransportKind.allCases, ["https://10.0.0.1/admin", "https://169.254.169.254/latest/meta-data"])
    func aLoopbackOriginsRedirectToAPrivateAddressIsRefused(kind: TransportKind, location: String) async throws {
        try await withServer(
            kind, .init(),
            { _ in .respond(.init(status: 302, headers: [("Location", location)])) }
        ) { server, client in
            do {
                _ = try await client.send(HTTPRequest(url: server.baseURL + "/start", timeout: .seconds(60)))
                Issue.record("the redirect to \(location) was followed")
            } catch let error as HTTPClientError {
                #expect(error.code == .insecureURL, "\(error)")
            }
        }
    }

    /// Issue 45, one choke point: a request carries its network's destination rule and both transports hold every
    /// hop to it. The origin is trusted; a redirect to another local service (loopback, which the transport's own
    /// rule allows) is refused by the rule, and nothing reaches it.
    @Test(arguments: TransportKind.allCases)
    func aRedirectHopIsHeldToTheRequestsDestinationRule(kind: TransportKind) async throws {
        let admin = try RecordingTarget()
        let location = "http://127.0.0.1:\(admin.server.port)/admin/export?all=1"
        try await withServer(
            kind, .init(),
            { _ in .respond(.init(status: 302, headers: [("Location", location)])) }
        ) { server, client in
            let rule = DestinationPolicy.strict.trusting(server.baseURL)
            do {
                _ = try await client.send(
                    HTTPRequest(url: server.baseURL + "/ad", timeout: .seconds(60)).requiring(rule, as: .api))
                Issue.record("the redirect to another origin was followed")
            } catch let error as HTTPClientError {
                #expect(error.code == .insecureURL, "\(error)")
            }
            #expect(admin.requests.isEmpty, "nothing reached the other local service")
        }
    }

    /// The request's own URL is held to its rule before anything connects.
    @Test(arguments: TransportKind.allCases)
    func aRequestOutsideItsDestinationRuleIsRefusedBeforeConnecting(kind: TransportKind) async throws {
        let target = try RecordingTarget()
        try await withServer(kind, .init(), { _ in .respond(.text("ok")) }) { server, client in
            do {
                _ = try await client.send(
                    HTTPRequest(url: target.server.baseURL + "/track", timeout: .seconds(60))
                        .requiring(.strict.trusting(server.baseURL), as: .tracking))
                Issue.record("the request was sent")
            } catch let error as HTTPClientError {
                #expect(error.code == .insecureURL, "\(error)")
            }
            #expect(target.requests.isEmpty)
        }
    }

    @Test(arguments: TransportKind.allCases)
    func a303ContinuesAsAGetWithoutTheBody(kind: TransportKind) async throws {
        let seen = LockedValue<[LoopbackHTTPServer.Request]>([])
        try await withServer(
            kind, .init(),
            { request in
                seen.withLock { $0.append(request) }
                return request.path == "/done"
                    ? .respond(.text("ok")) : .respond(.init(status: 303, headers: [("Location", "/done")]))
            }
        ) { server, client in
            _ = try await client.send(
                HTTPRequest(method: .post, url: server.baseURL + "/form", body: Data("a=1".utf8), timeout: .seconds(60))
            )
            let last = try #require(seen.withLock { $0.last })
            #expect(last.method == "GET" && last.body.isEmpty)
        }
    }

    @Test(arguments: TransportKind.allCases)
    func withRedirectsOffTheRedirectResponseIsReturned(kind: TransportKind) async throws {
        try await withServer(
            kind, .init(maxRedirects: 0),
            { _ in
                .respond(.init(status: 302, headers: [("Location", "/elsewhere")]))
            }
        ) { server, client in
            let response = try await client.send(HTTPRequest(url: server.baseURL + "/", timeout: .seconds(60)))
            #expect(response.status == 302)
            #expect(response.headers["Location"] == "/elsewhere")
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aRedirectToAnotherSchemeIsRefused(kind: TransportKind) async throws {
        try await withServer(
            kind, .init(), { _ in .respond(.init(status: 302, headers: [("Location", "file:///etc/passwd")])) }
        ) {
            server, client in
            let error = await transportError {
                try await client.send(HTTPRequest(url: server.baseURL + "/", timeout: .seconds(60)))
            }
            #expect(error?.code == .insecureURL)
        }
    }
}

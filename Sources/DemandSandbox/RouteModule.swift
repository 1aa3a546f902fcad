import Foundation
import HTTPTypes
import Hummingbird

/// One network's routes in the sandbox, mounted under `/<network>/`: how a network that is not built in gets a
/// sandbox of its own (docs/ARCHITECTURE.md, "Adding a network"). The sandbox counts each request in its records,
/// and for an ad request (``SandboxReply/ad(placement:render:)``) draws the scenario of `<network>/<placement>`
/// (fill, price, latency, fault), so scenario files, `--demo` faults and the admin API work for it unchanged.
public protocol SandboxRouteModule: Sendable {
    /// The first path segment, which is also the network's key in a ``SandboxScenario``: `echo` for `/echo/v1/ad`.
    /// Lower-case letters, digits, `-` and `_`; the built-in networks' names are taken.
    var network: String { get }

    /// Answers one request under `/<network>/`.
    func respond(to request: SandboxRequest) -> SandboxReply
}

/// A request to a ``SandboxRouteModule``.
public struct SandboxRequest: Sendable {
    /// `GET`, `POST`, …
    public var method: String
    /// The path after `/<network>`, e.g. `/v1/ad`.
    public var path: String
    /// The query's items (the last value of a repeated name).
    public var query: [String: String]
    /// The body (at most 1 MiB).
    public var body: Data
    /// The module's base URL, `http://HOST:PORT/<network>`, for URLs in answers (tracking, creatives).
    public var baseURL: String
    let headers: HTTPFields

    /// The value of the header `name` (case-insensitive), if present.
    public func header(_ name: String) -> String? {
        HTTPField.Name(name).flatMap { headers[$0] }
    }
}

/// A ``SandboxRouteModule``'s answer.
public struct SandboxReply: Sendable {
    enum Kind: Sendable {
        case plain(status: Int, json: Data?)
        case ad(placement: String, render: @Sendable (Double) -> Data)
    }
    let kind: Kind

    /// A JSON answer with `status`.
    public static func json(_ status: Int, _ body: Data) -> SandboxReply {
        SandboxReply(kind: .plain(status: status, json: body))
    }

    /// An answer with `status` and no body (e.g. 204 for a tracking hit).
    public static func empty(_ status: Int) -> SandboxReply { SandboxReply(kind: .plain(status: status, json: nil)) }

    /// An ad request for `placement`: the sandbox draws the scenario of `<network>/<placement>`; on a fill it answers
    /// 200 with `render(ecpm)` (JSON, the drawn price), on no fill 204; the drawn latency and fault apply to both.
    public static func ad(placement: String, render: @escaping @Sendable (Double) -> Data) -> SandboxReply {
        SandboxReply(kind: .ad(placement: placement, render: render))
    }
}

extension SandboxState {
    /// The module mounted at the first segment of `path`, if any.
    func routeModule(for path: String) -> (any SandboxRouteModule)? {
        let segment = path.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: true).first
        guard let segment else { return nil }
        return configuration.routeModules.first { $0.network == segment }
    }

    /// Answers a request through `module`, drawing the scenario for an ad request.
    func respond(_ incoming: Incoming, with module: any SandboxRouteModule, context: SandboxContext) async -> Response {
        let prefix = "/" + module.network
        let request = SandboxRequest(
            method: incoming.method, path: String(incoming.path.dropFirst(prefix.count)), query: incoming.query,
            body: incoming.body, baseURL: baseURL + prefix, headers: incoming.headers)
        switch module.respond(to: request).kind {
        case .plain(let status, let json):
            guard let json else { return Self.empty(status) }
            return Self.json(status, json)
        case .ad(let placement, let render):
            let draw = self.draw(network: module.network, placement: placement)
            guard draw.fills else {
                if let faulted = await applyDraw(draw, validBody: Data(), context: context) { return faulted }
                return Self.empty(204)
            }
            let body = render(draw.ecpm)
            if let faulted = await applyDraw(draw, validBody: body, context: context) { return faulted }
            return Self.json(200, body)
        }
    }
}

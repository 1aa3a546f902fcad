import Foundation
import HTTPTypes
import Hummingbird
import SandboxRouting

/// How the sandbox serves a ``SandboxRouteModule``: the built-in networks' modules from the registry
/// (`BuiltInNetworks`) and the configuration's (``SandboxConfiguration/routeModules``), each under `/<network>/`.
extension SandboxState {
    /// The module mounted at the first segment of `path`, if any.
    func routeModule(for path: String) -> (any SandboxRouteModule)? {
        let segment = path.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: true).first
        guard let segment else { return nil }
        return routeModules.first { $0.network == segment }
    }

    /// Answers a request through `module`, drawing the scenario for an ad request.
    func respond(_ incoming: Incoming, with module: any SandboxRouteModule, context: SandboxContext) async -> Response {
        let prefix = "/" + module.network
        var headers: [String: String] = [:]
        for field in incoming.headers {
            let name = field.name.canonicalName
            headers[name] = headers[name].map { $0 + ", " + field.value } ?? field.value
        }
        let root = baseURL
        let request = SandboxRequest(
            method: incoming.method, path: String(incoming.path.dropFirst(prefix.count)), query: incoming.query,
            body: incoming.body, baseURL: root + prefix, rootURL: root, target: incoming.pathWithQuery,
            headers: headers)
        switch module.respond(to: request).kind {
        case .plain(let status, let json):
            guard let json else { return Self.empty(status) }
            return Self.json(status, json)
        case .tracked(let status):
            let hit = CallbackRecord(network: module.network, path: incoming.path, query: incoming.query)
            record { $0.trackingHits.append(hit) }
            return Self.empty(status)
        case .ads(let placements, let headers, let render):
            let draws = placements.map { self.draw(network: module.network, placement: $0) }
            let prices = draws.map { $0.fills ? $0.ecpm : nil }
            let body = render(SandboxDraws(prices: prices) { [self] in nextSerial() })
            if let first = draws.first, let faulted = await applyDraw(first, validBody: body, context: context) {
                return faulted
            }
            return Self.json(200, body, headers: headers.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
        case .ad(let placement, let options, let render):
            if let privacy = options.privacy { record { $0.adRequestPrivacy.append(privacy) } }
            var draw = self.draw(network: options.scenarioNetwork ?? module.network, placement: placement)
            if options.alwaysFills { draw.fills = true }
            guard draw.fills, draw.ecpm >= options.floor else {
                if let faulted = await applyDraw(draw, validBody: Data(), context: context) { return faulted }
                guard let body = options.noFillBody else { return Self.empty(204) }
                return Self.json(200, body)
            }
            let body = render(SandboxFill(ecpm: draw.ecpm, serial: nextSerial()))
            if let faulted = await applyDraw(draw, validBody: body, context: context) { return faulted }
            return Self.json(200, body)
        }
    }
}

extension SandboxState {
    /// `GET /admin/records`: the sandbox's records (snake_case keys), with each module's own under
    /// `modules.<network>`.
    func recordsJSON() -> Data? {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.outputFormatting = .sortedKeys
        guard let shared = try? encoder.encode(records),
            var object = (try? JSONSerialization.jsonObject(with: shared)) as? [String: Any]
        else { return nil }
        var modules: [String: Any] = [:]
        for module in routeModules {
            guard let json = module.recordsJSON(), let value = try? JSONSerialization.jsonObject(with: json) else {
                continue
            }
            modules[module.network] = value
        }
        object["modules"] = modules
        return try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
    }
}

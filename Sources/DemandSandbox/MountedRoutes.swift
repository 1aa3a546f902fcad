import AdapterKit
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import SandboxRouting

/// How the sandbox serves a ``SandboxRouteModule``: the built-in networks' modules from the registry
/// (`BuiltInNetworks`) and the configuration's (``SandboxConfiguration/routeModules``, which replace a registry's
/// module of the same name), each under `/<network>/`.
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
        return await answer(module.respond(to: request), from: module, incoming: incoming, context: context)
    }

    /// Serves `reply` of `module` to `incoming`.
    private func answer(
        _ reply: SandboxReply, from module: any SandboxRouteModule, incoming: Incoming, context: SandboxContext
    ) async -> Response {
        switch reply.kind {
        case .plain(let status, let json):
            guard let json else { return Self.empty(status) }
            return Self.json(status, json)
        case .bytes(let status, let contentType, let body):
            var fields = HTTPFields()
            fields[.contentType] = contentType
            return Response(
                status: .init(code: status), headers: fields, body: .init(byteBuffer: ByteBuffer(bytes: body)))
        case .reset:
            return await Self.resetConnection(context)
        case .delayed(let delay, let reply):
            try? await Task.sleep(for: delay)
            return await answer(reply, from: module, incoming: incoming, context: context)
        case .requestFault(let placement, let key, let then):
            let fault = requestFault(network: module.network, placement: placement, key: key)
            return await answer(then(fault), from: module, incoming: incoming, context: context)
        case .tracked(let status):
            let hit = CallbackRecord(network: module.network, path: incoming.path, query: incoming.query)
            record { $0.trackingHits.append(hit) }
            return Self.empty(status)
        case .drawn(let placement, let privacy, let render):
            if let privacy { record { $0.adRequestPrivacy.append(privacy) } }
            let draw = self.draw(network: module.network, placement: placement)
            let body = render(SandboxDraw(fills: draw.fills, ecpm: draw.ecpm) { [self] in nextSerial() })
            if let faulted = await applyDraw(draw, validBody: body, context: context) { return faulted }
            return Self.json(200, body)
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

    /// How many requests' fault counts are kept (``NetworkScenario/maxValidationFaults``); past it they start again.
    static let requestFaultKeyLimit = 10_000

    /// Rolls the dice for one attempt of a module's request that may be faulted
    /// (``SandboxReply/withRequestFault(placement:key:then:)``): one of the `validation_faults` of `network`'s (or
    /// the placement's) scenario, unless the request `key` had its ``NetworkScenario/maxValidationFaults`` already.
    /// No draw (the seeded sequence of ad requests stays as it was) when the scenario has no validation faults.
    func requestFault(network: String, placement: String?, key: String) -> SandboxRequestFault? {
        mutable.withLock { m -> SandboxRequestFault? in
            let scenario = m.scenario.scenario(network: network, placement: placement)
            let key = network + " " + key
            guard !scenario.validationFaults.isEmpty,
                m.requestFaultCounts[key, default: 0] < scenario.maxValidationFaults
            else { return nil }
            let roll = m.rng.nextUnit()
            var cumulative = 0.0
            for candidate in scenario.validationFaults {
                cumulative += candidate.rate
                guard roll < cumulative else { continue }
                if m.requestFaultCounts.count >= Self.requestFaultKeyLimit { m.requestFaultCounts = [:] }
                m.requestFaultCounts[key, default: 0] += 1
                return SandboxRequestFault(
                    kind: candidate.kind.rawValue, status: candidate.status,
                    delay: .milliseconds(candidate.delayMs))
            }
            return nil
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
            var object = (try? JSONDecoder().decode(JSONValue.self, from: shared))?.object
        else { return nil }
        var modules: [String: JSONValue] = [:]
        for module in routeModules {
            guard let json = module.recordsJSON(), let value = try? JSONDecoder().decode(JSONValue.self, from: json)
            else { continue }
            modules[module.network] = value
        }
        object["modules"] = .object(modules)
        // A plain encoder for the whole: the keys are final (a key strategy would rewrite dictionary keys too).
        let writer = JSONEncoder()
        writer.outputFormatting = .sortedKeys
        return try? writer.encode(JSONValue.object(object))
    }
}

import AdMediation
import AdTransport
import DemandSandbox
import Foundation

/// `mediate conformance` against a demand sandbox (the demo's, or one `mediate sandbox` serves for `--config`): the
/// sandbox's admin API (`GET`/`PUT /admin/scenario`) sets the behaviour each scenario needs for the network under
/// test — every request filled, then none, then every request failing with a 500, then every answer 1.5 s late —
/// and puts the sandbox's own scenario back at the end. A server without that API is not a sandbox: the command says
/// so, relies on the server filling, and skips the scenarios it cannot provoke.
struct ConformanceSandbox {
    /// The sandbox's root (`http://127.0.0.1:8082`).
    let root: String
    /// The network's key in the sandbox's scenario: the first segment of its base URL's path (`chartboost`, `mars`,
    /// an OpenRTB bidder's name).
    let key: String
    /// The scenario the sandbox had, as it answered it.
    let original: Data
    let http: any HTTPClient

    /// The status of the failing phase's answers, and the error code the kit expects for it.
    static let failingStatus = 500
    /// How late the slow phase answers (the kit's slow request takes at least one second).
    static let slowLatencyMs = 1500.0

    /// What `baseURL` would give: the root and the network's key, or nil when it has no path to name a network.
    static func locate(baseURL: String) -> (root: String, key: String)? {
        guard let components = URLComponents(string: baseURL), let scheme = components.scheme,
            let host = components.host
        else { return nil }
        var segments = components.path.split(separator: "/").map(String.init)
        if segments.first == "openrtb", segments.count > 1 { segments.removeFirst() }
        guard let key = segments.first, !key.isEmpty else { return nil }
        let hostPart = host.contains(":") ? "[\(host)]" : host
        return ("\(scheme)://\(hostPart)\(components.port.map { ":\($0)" } ?? "")", key)
    }

    /// Connects to the sandbox behind `baseURL`, or says why the server there cannot be driven.
    static func connect(baseURL: String, http: any HTTPClient) async -> Result<ConformanceSandbox, AdError> {
        guard let (root, key) = locate(baseURL: baseURL) else {
            return .failure(AdError(.configuration, "its base_url \(baseURL) names no network path"))
        }
        do {
            let answer = try await http.send(
                HTTPRequest(url: root + "/admin/scenario", timeout: .seconds(5)))
            guard answer.status == 200 else {
                return .failure(AdError(.configuration, "GET \(root)/admin/scenario answered \(answer.status)"))
            }
            // Read as a scenario: a server that answers 200 with something else is not a sandbox either.
            _ = try SandboxScenario.decode(json: answer.body)
            return .success(ConformanceSandbox(root: root, key: key, original: answer.body, http: http))
        } catch let error as AdError {
            return .failure(AdError(.configuration, "GET \(root)/admin/scenario: \(error.message)"))
        } catch {
            return .failure(AdError(.configuration, "GET \(root)/admin/scenario: not a sandbox scenario (\(error))"))
        }
    }

    /// Sets the network's behaviour for `placement` (and for the network as a whole): the scenario the sandbox had
    /// for it (its prices kept), without drift, faults or latency, then `change`d.
    func set(placement: String, _ change: (inout NetworkScenario) -> Void) async throws {
        var scenario = try SandboxScenario.decode(json: original)
        var behaviour = scenario.placements["\(key)/\(placement)"] ?? scenario.networks[key] ?? NetworkScenario()
        behaviour.fillRate = 1
        behaviour.faults = []
        behaviour.drift = []
        behaviour.latencyMs = .fixed(0)
        change(&behaviour)
        scenario.networks[key] = behaviour
        scenario.placements["\(key)/\(placement)"] = behaviour
        try await put(try JSONEncoder().encode(scenario))
    }

    /// Puts the sandbox's own scenario back.
    func restore() async throws { try await put(original) }

    private func put(_ body: Data) async throws {
        let answer = try await http.send(
            HTTPRequest(
                method: .put, url: root + "/admin/scenario", headers: ["Content-Type": "application/json"], body: body,
                timeout: .seconds(5)))
        guard answer.status == 200 else {
            throw AdError(
                .configuration,
                "PUT \(root)/admin/scenario answered \(answer.status): "
                    + String(decoding: answer.body.prefix(200), as: UTF8.self))
        }
    }
}

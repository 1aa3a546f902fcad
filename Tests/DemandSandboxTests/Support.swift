import AdMediation
import AdTransport
import ChartboostSandbox
import CurlTransport
import DemandSandbox
import Foundation
import GrowthCatSandbox
import MARSSandbox
import Testing

/// Starts a sandbox and a client, runs `body`, shuts both down (the library's own scopes).
func withSandbox(
    _ scenario: SandboxScenario = SandboxScenario(),
    _ body: (RunningSandbox, CurlHTTPClient) async throws -> Void
) async throws {
    try await DemandSandbox.withSandbox(scenario: scenario) { sandbox in
        try await withCurlHTTPClient { client in try await body(sandbox, client) }
    }
}

func json(_ response: HTTPResponse) throws -> [String: Any] {
    try #require(
        try JSONSerialization.jsonObject(with: response.body) as? [String: Any],
        "body: \(String(decoding: response.body, as: UTF8.self))")
}

func errorCode(_ response: HTTPResponse) -> String? {
    ((try? JSONSerialization.jsonObject(with: response.body) as? [String: Any])?["error"] as? [String: Any])?["code"]
        as? String
}

let gcAuth: HTTPHeaders = ["Authorization": "Bearer gc_test_demo"]

func post(_ url: String, _ body: String, headers: HTTPHeaders = ["Content-Type": "application/json"]) -> HTTPRequest {
    HTTPRequest(method: .post, url: url, headers: headers, body: Data(body.utf8))
}

/// Signs a Chartboost-style request the way the contract says.
func signed(
    _ method: HTTPMethod, _ sandbox: RunningSandbox, _ pathWithQuery: String, body: String = "",
    secret: String = "cb_sig_demo_secret"
) -> HTTPRequest {
    let signature = ChartboostRoutes.signature(
        secret: secret, method: method.rawValue, pathWithQuery: pathWithQuery, body: Data(body.utf8))
    var headers: HTTPHeaders = ["X-CB-App-Id": "cb_app_demo", "X-CB-Signature": signature]
    if !body.isEmpty { headers.add(name: "Content-Type", value: "application/json") }
    return HTTPRequest(
        method: method, url: sandbox.rootURL + pathWithQuery, headers: headers,
        body: body.isEmpty ? nil : Data(body.utf8))
}

extension RunningSandbox {
    /// What the sandbox's MARS routes received (their module's records).
    var marsRecords: MarsRoutes.Records { routes(MarsRoutes.self)?.records ?? MarsRoutes.Records() }
    /// What the sandbox's GrowthCat routes received (their module's records).
    var growthcatRecords: GrowthCatRoutes.Records {
        routes(GrowthCatRoutes.self)?.records ?? GrowthCatRoutes.Records()
    }
}

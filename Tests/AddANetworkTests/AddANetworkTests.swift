import AdMediation
import AdMediationTesting
import AdNetworkConformance
import AdapterKit
import CurlTransport
import DemandSandbox
import Foundation
import MediateKit
import Testing

/// The "Adding a network" checklist of docs/ARCHITECTURE.md, proved by a sixth network (`EchoAds/`, this target's
/// folder) that touches nothing outside it but one test-target entry in Package.swift: its factory is one more entry
/// in the registry list the configuration file is read with, its sandbox routes one ``SandboxRouteModule``.
@Suite("Adding a network", .timeLimit(.minutes(2)))
struct AddANetworkTests {
    static let factories = CLIConfiguration.factories + [EchoFactory.self]
    /// Requests to the sandbox over loopback: a hang guard (TestSupport's `HangGuard.request`, which this target does
    /// not link), not the echo network's 5 s default, so a busy machine cannot turn an answer into a timeout.
    static let timeout: Duration = .seconds(30)

    /// A sandbox with the echo routes, a curl client, and `body`; everything is shut down afterwards.
    func withEcho(
        _ scenario: SandboxScenario = SandboxScenario(),
        _ body: (RunningSandbox, CurlHTTPClient) async throws -> Void
    ) async throws {
        var configuration = SandboxConfiguration()
        configuration.routeModules = [EchoRoutes()]
        let sandbox = try await DemandSandbox.start(scenario: scenario, configuration: configuration)
        let http = CurlHTTPClient()
        do { try await body(sandbox, http) } catch {
            await http.shutdown()
            await sandbox.shutdown()
            throw error
        }
        await http.shutdown()
        await sandbox.shutdown()
    }

    func configuration(_ sandbox: RunningSandbox, settings: String = "") -> Data {
        Data(
            """
            { "networks": { "echo": { "type": "echo", "base_url": "\(sandbox.moduleBaseURL("echo"))"\(settings) } },
              "placements": { "top": { "format": "banner", "size": "320x50", "lines": [
                  { "network": "echo", "placement": "echo_banner", "timeout_ms": 30000 } ] } } }
            """.utf8)
    }

    @Test("a sixth network named in a configuration file fills through the mediator from its sandbox routes")
    func sixthNetworkFillsThroughTheMediator() async throws {
        let scenario = SandboxScenario(networks: ["echo": NetworkScenario(ecpm: .fixed(3.5))])
        try await withEcho(scenario) { sandbox, http in
            let file = try CLIConfiguration.parse(configuration(sandbox), factories: Self.factories)
            let context = AdNetworkFactoryContext(http: http)
            let networks = try file.networks.values.map { network throws(AdError) in
                try network.make(context: context).network
            }
            let mediator = try Mediator(networks: networks, configuration: file.mediation)
            let request = AdRequest(placement: "top", format: .banner(.standard), timeout: Self.timeout)
            let ad = try #require(try await mediator.load(request).ad)
            #expect(ad.networkID == "echo")
            #expect(ad.ecpm == 3.5)
            #expect(ad.creative.assetURL == sandbox.moduleBaseURL("echo") + "/img.png")
            #expect(sandbox.records.requestCounts["GET /echo/v1/ad"] == 1)
        }
    }

    @Test("the scenario's fill rate applies to a route module's ad requests")
    func scenarioFillRateAppliesToTheModule() async throws {
        let scenario = SandboxScenario(placements: ["echo/echo_banner": NetworkScenario(fillRate: 0)])
        try await withEcho(scenario) { sandbox, http in
            let network = EchoNetwork(
                id: "echo", baseURL: sandbox.moduleBaseURL("echo"), http: http, clock: SystemAdClock())
            let result = try await network.load(
                AdRequest(placement: "echo_banner", format: .banner(.standard), timeout: Self.timeout))
            #expect(result.ad == nil)
        }
    }

    @Test("a fault drawn from the scenario reaches the module's caller as the network's error")
    func scenarioFaultAppliesToTheModule() async throws {
        let fault = Fault(.status, rate: 1, status: 503)
        let scenario = SandboxScenario(networks: ["echo": NetworkScenario(faults: [fault])])
        try await withEcho(scenario) { sandbox, http in
            let network = EchoNetwork(
                id: "echo", baseURL: sandbox.moduleBaseURL("echo"), http: http, clock: SystemAdClock())
            let error = await #expect(throws: AdError.self) {
                try await network.load(
                    AdRequest(placement: "echo_banner", format: .banner(.standard), timeout: Self.timeout))
            }
            #expect(error?.code == .server(status: 503))
        }
    }

    @Test("a typo in the sixth network's settings is an error naming the field and the likely key")
    func settingsTypoNamesTheNearestKey() async throws {
        try await withEcho { sandbox, _ in
            let data = configuration(sandbox, settings: #", "greting": "hi""#)
            let error = #expect(throws: AdError.self) { try CLIConfiguration.parse(data, factories: Self.factories) }
            let message = error?.message ?? ""
            #expect(message.contains("networks.echo") && message.contains("greeting"), "\(message)")
        }
    }

    @Test("the sixth network passes the conformance kit against its sandbox routes")
    func sixthNetworkPassesTheConformanceKit() async throws {
        let scenario = SandboxScenario(placements: [
            "echo/echo_slow": NetworkScenario(latencyMs: .fixed(1500))
        ])
        try await withEcho(scenario) { sandbox, curl in
            let http = RecordingHTTPClient(wrapping: curl)
            let network = EchoNetwork(
                id: "echo", baseURL: sandbox.moduleBaseURL("echo"), http: http, clock: SystemAdClock())
            let subject = ConformanceSubject(
                network: network, wire: http,
                fillRequest: AdRequest(placement: "echo_banner", format: .banner(.standard), timeout: Self.timeout),
                failingRequest: (
                    AdRequest(placement: "unknown", format: .banner(.standard), timeout: Self.timeout), .badRequest
                ),
                slowRequest: AdRequest(placement: "echo_slow", format: .banner(.standard)))
            let results = await AdNetworkConformance.runAll(subject)
            await network.shutdown()
            for result in results where result.status != .passed {
                if case .skipped = result.status { continue }
                Issue.record("\(result.scenario): \(result.status)")
            }
            #expect(results.contains { $0.status == .passed })
        }
    }
}

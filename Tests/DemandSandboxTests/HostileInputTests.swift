import AdMediation
import AdNetworkConformance
import AdTransport
import CurlTransport
import DemandSandbox
import Foundation
import Testing

@Suite("Sandbox under hostile input", .timeLimit(.minutes(1)))
struct SandboxHostileInputTests {
    @Test func startingOnAPortInUseFailsWithAClearError() async throws {
        let first = try await DemandSandbox.start()
        var configuration = SandboxConfiguration()
        configuration.port = first.port
        do {
            let second = try await DemandSandbox.start(configuration: configuration)
            await second.shutdown()
            Issue.record("a second sandbox started on port \(first.port)")
        } catch let error as SandboxError {
            #expect(error.description.hasPrefix("the sandbox could not listen on 127.0.0.1:\(first.port):"))
        }
        // How fast it fails (no waiting for the port) is a wall-clock bound: TimingTests' SandboxTimingTests.
        await first.shutdown()
    }

    static let valid = #"""
        {"seed": 1, "networks": {"mars": {"fill_rate": 0.5, "ecpm": {"fixed": 2}, "latency_ms": {"uniform": {"min": \#
        1, "max": 5}},
          "faults": [{"kind": "status", "rate": 0.1, "status": 429, "retry_after_s": 2}]}}}
        """#

    @Test(arguments: [
        (["networks", "mars", "fill_rate"], "networks.mars.fill_rate: must be 0…1"),
        (["networks", "mars", "ecpm", "fixed"], "networks.mars.ecpm: every value must be 0.0…1000000.0"),
        (
            ["networks", "mars", "latency_ms", "uniform", "max"],
            "networks.mars.latency_ms: every value must be 0.0…60000.0"
        ),
        (["networks", "mars", "faults", "0", "rate"], "networks.mars.faults[0].rate: must be 0…1"),
        (
            ["networks", "mars", "faults", "0", "status"],
            "networks.mars.faults[0].status: must be a whole number 100…599"
        ),
        (
            ["networks", "mars", "faults", "0", "retry_after_s"],
            "networks.mars.faults[0].retry_after_s: must be a whole number 0…604800"
        ),
    ])
    func aScenarioNumberOutOfRangeIsRefusedNamingTheField(path: [String], expected: String) throws {
        for value in [HostileJSON.huge, HostileJSON.hugeNegative, HostileJSON.int64Max, HostileJSON.wrongType] {
            let body = try #require(HostileJSON.replacing(path, in: Self.valid, with: value))
            do {
                _ = try SandboxScenario.decode(json: body)
                Issue.record("\(path) = \(value) was accepted")
            } catch {
                // Out-of-range numbers name the rule; a wrong type names the exact field.
                let prefix = value.name == "wrong_type" ? "scenario: \(Self.dotted(path)): " : "scenario: \(expected)"
                #expect(error.description.hasPrefix(prefix), "\(path) = \(value): \(error)")
            }
        }
    }

    static func dotted(_ path: [String]) -> String {
        path.map { Int($0) != nil ? "[\($0)]" : ".\($0)" }.joined().drop { $0 == "." }.description
    }

    @Test func theAdminEndpointRefusesAHostileScenarioAndKeepsTheCurrentOne() async throws {
        try await withSandbox { sandbox, client in
            let body = String(repeating: "[", count: 100_000)
            let response = try await client.send(post(sandbox.adminURL + "/scenario", body))
            #expect(response.status == 400)
            #expect(errorCode(response) == "invalid_scenario")
            #expect(sandbox.scenario == SandboxScenario())
        }
    }

    @Test func aProgrammaticScenarioWithAHugeLatencyOrStatusNeverTrapsTheSandbox() async throws {
        let scenario = SandboxScenario(networks: [
            "appopen": NetworkScenario(
                latencyMs: .fixed(-1e308), faults: [Fault(.status, status: 1_000_000, retryAfterS: -7)])
        ])
        try await withSandbox(scenario) { sandbox, client in
            let query = "ad_unit_id=ca-app-pub-sandbox%2Fapp_open_main&request_id=r1"
            let response = try await client.send(HTTPRequest(url: sandbox.appOpenBaseURL + "/appopen/v1/ad?" + query))
            #expect(response.status == 500, "a status outside 100…599 is answered as 500")
        }
    }
}

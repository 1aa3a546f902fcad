import DemandSandbox
import Foundation
import TestSupport
import Testing

/// docs/CONFIG.md's "Scenario files" section (issue 33 item 9): its example is a scenario `mediate sandbox --scenario`
/// serves, the defaults and the error it states are the sandbox's.
@Suite("docs/CONFIG.md: the scenario file format", .serialized, .timeLimit(.minutes(2)))
struct ScenarioDocsTests {
    /// The section of docs/CONFIG.md, from its heading to the next one.
    static func section() throws -> String {
        let docs = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath().deletingLastPathComponent()
            .deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/CONFIG.md")
        let text = try String(contentsOf: docs, encoding: .utf8)
        let start = try #require(text.range(of: "## Scenario files"), "the section exists")
        let rest = text[start.upperBound...]
        return String(rest[..<(rest.range(of: "\n## ")?.lowerBound ?? rest.endIndex)])
    }

    /// The section's JSON example.
    static func example() throws -> String {
        let section = try section()
        let open = try #require(section.range(of: "```json\n"))
        let close = try #require(section[open.upperBound...].range(of: "```"))
        return String(section[open.upperBound..<close.lowerBound])
    }

    @Test("the documented example is served by mediate sandbox --scenario")
    func theExampleIsServed() async throws {
        let path = try writeConfig(try Self.example())
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("mediate").path
        let run = try await ChildProcess.run(
            binary, ["sandbox", "--scenario", path], killWhen: { $0.contains("admin ") }, deadline: .seconds(60))
        #expect(!run.timedOut, "\(run.out)\(run.err)")
        #expect(run.out.contains("chartboost http://127.0.0.1:"), "\(run.out)\(run.err)")
    }

    @Test("the example means what the section says: seed, rates, distributions, faults, drift, placement overrides")
    func theExampleMeansWhatItSays() throws {
        let scenario = try SandboxScenario.decode(json: Data(try Self.example().utf8))
        #expect(scenario.seed == 7)
        let chartboost = try #require(scenario.networks["chartboost"])
        #expect(chartboost.fillRate == 0.6)
        #expect(chartboost.faults.map(\.status) == [503] && chartboost.faults.map(\.rate) == [0.02])
        let mars = try #require(scenario.networks["mars"])
        #expect(mars.drift.map(\.afterRequests) == [2000] && mars.drift.map(\.fillRate) == [0.2])
        let override = try #require(scenario.placements["growthcat/video_break"])
        #expect(override.fillRate == 0.3)
        #expect(override.ecpm == .fixed(6))
    }

    @Test("the stated defaults: seed 42, always fill, eCPM uniform 0.5-5, no latency, fault rate 1 and status 500")
    func theDefaultsAreTheStatedOnes() throws {
        let scenario = try SandboxScenario.decode(
            json: Data(#"{"networks": {"mars": {"faults": [{"kind": "status"}]}}}"#.utf8))
        #expect(scenario.seed == 42)
        let mars = try #require(scenario.networks["mars"])
        #expect(mars.fillRate == 1)
        #expect(mars.ecpm == .uniform(min: 0.5, max: 5))
        #expect(mars.latencyMs == .fixed(0))
        #expect(mars.faults.first?.rate == 1 && mars.faults.first?.status == 500)
        #expect(mars.faults.first?.retryAfterS == 1)
    }

    @Test("an out-of-range field gives the documented error, exit 2")
    func theDocumentedErrorIsTheOne() async throws {
        let section = try Self.section()
        let documented = "--scenario: scenario: networks.mars.fill_rate: must be 0…1, got 1.5"
        #expect(section.contains(documented))
        let path = try writeConfig(#"{"networks": {"mars": {"fill_rate": 1.5}}}"#)
        let run = try await mediate(["sandbox", "--scenario", path])
        #expect(run.code == 2)
        #expect(run.err.contains(documented), "\(run.err)")
    }
}

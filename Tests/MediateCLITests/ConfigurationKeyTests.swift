import AdMediation
import Foundation
import MediateKit
import TestSupport
import Testing

/// Every key of `mediate`'s configuration file is checked (issue 32 item 3): a misspelt key in the file's own keys, a
/// network's settings or a placement is an error naming its path and the nearest valid key.
@Suite("mediate configuration: unknown keys", .timeLimit(.minutes(1)))
struct ConfigurationKeyTests {
    func problem(_ json: String) -> String? {
        do {
            _ = try CLIConfiguration.parse(Data(json.utf8))
            return nil
        } catch {
            return error.message
        }
    }

    /// A file with the Chartboost network `cb` (with `extra` added) and one banner placement whose line has `line`.
    func file(network extra: String = "", line: String = "", root: String = "") -> String {
        """
        {"networks": {"cb": {"type": "chartboost", "base_url": "http://127.0.0.1:9/chartboost", \(extra)
           "app_id": "a", "app_signature": "s"}},
         "placements": {"b": {"format": "banner", "size": "320x50",
           "lines": [{"network": "cb", "placement": "Main Menu", \(line) "timeout_ms": 100}]}}\(root)}
        """
    }

    @Test func aMisspeltFloorInALineOfTheFileIsRefusedNamingTheLineAndTheFloorKey() {
        #expect(
            problem(file(line: #""floor_ecmp": 1,"#))
                == #"placements.b.lines[0].floor_ecmp: unknown key; did you mean "floor_ecpm"?"#)
    }

    @Test func aMisspeltSettingOfANetworkIsRefusedNamingItsTypeAndTheNearestSetting() {
        #expect(
            problem(file(network: #""app_signture": "s2","#))
                == #"networks.cb.app_signture: unknown key for type chartboost; did you mean "app_signature"?"#)
    }

    @Test func aMisspeltBaseURLIsRefusedAsAnUnknownKeyNotAsAMissingOne() {
        let json = #"{"networks": {"ao": {"type": "appopen", "baseurl": "http://h/"}}, "placements": {}}"#
        #expect(problem(json) == #"networks.ao.baseurl: unknown key for type appopen; did you mean "base_url"?"#)
    }

    @Test func aMisspeltKeyInsideANetworksNestedSettingIsRefusedNamingTheNearestKey() {
        let json = """
            {"networks": {"m": {"type": "mars", "base_url": "http://h/mars/v1/", \
            "ohttp": {"relay": "http://r/", "confg": "http://c/"}}}, "placements": {}}
            """
        #expect(problem(json) == #"networks.m.ohttp.confg: unknown key; did you mean "config"?"#)
    }

    @Test func aMisspeltKeyOfTheFileItselfIsRefusedNamingTheNearestKey() {
        #expect(
            problem(file(root: #", "circuit_braker": {}"#))
                == #"circuit_braker: unknown key; did you mean "circuit_breaker"?"#)
    }

    /// docs/CONFIG.md's example is the reference for the format: it must load as written.
    @Test func theDocumentedExampleFileLoads() throws {
        let docs = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath().deletingLastPathComponent()
            .deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/CONFIG.md")
        let text = try String(contentsOf: docs, encoding: .utf8)
        let start = try #require(text.range(of: "```json\n"))
        let end = try #require(text.range(of: "\n```", range: start.upperBound..<text.endIndex))
        let configuration = try CLIConfiguration.parse(Data(text[start.upperBound..<end.lowerBound].utf8))
        #expect(configuration.networks.count == 4)
        #expect(configuration.mediation.placements["main_banner"]?.lines.first?.floorEcpm == 1.0)
    }

    /// The built-in demo's configuration (what `mediate sandbox --demo standard --write-config` writes) loads.
    @Test func theDemoConfigurationLoads() async throws {
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("mediate")
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("demo-\(UUID().uuidString).json").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let run = try await ChildProcess.run(
            binary.path, ["sandbox", "--demo", "standard", "--port", "0", "--write-config", path],
            killWhen: { $0.contains("config") }, deadline: .seconds(60))
        #expect(!run.timedOut)
        let configuration = try CLIConfiguration.parse(Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(configuration.networks.count == 4)
        #expect(configuration.mediation.placements["main_banner"]?.lines.first?.floorEcpm == 1.0)
    }
}

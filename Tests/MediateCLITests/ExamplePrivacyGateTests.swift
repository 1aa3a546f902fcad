import Foundation
import Testing

/// Issue 44 item 4: "One gate for every path an adapter can be called from: … the examples." Each example that builds
/// a network (an `AdNetwork` it loads from) goes through the privacy gate: it wraps the network in
/// `PrivacyGatedNetwork` or asks it through a `Mediator` (whose lines are gated). MARS's seed API
/// (`MozAdsClient`, mars-newtab) is the network's own client, not an `AdNetwork`, and is not counted.
@Suite("Examples: every network goes through the privacy gate", .timeLimit(.minutes(1)))
struct ExamplePrivacyGateTests {
    /// The examples folder, from this file's path.
    static let examples = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath().deletingLastPathComponent()
        .deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Examples")

    /// The networks an example builds: `…Network(` constructions of an adapter or a scripted network.
    static let constructions = [
        "AppOpenNetwork(", "ChartboostNetwork(", "GrowthCatNetwork(", "MarsNetwork(", "BiddingNetwork(",
        "ScriptedAdNetwork(",
    ]

    /// Every Swift file under the examples folder, with its text.
    static func sources() throws -> [(name: String, text: String)] {
        let files = try #require(FileManager.default.enumerator(at: examples, includingPropertiesForKeys: nil))
        return try files.compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" }.map { file in
            let name = file.path.replacingOccurrences(of: examples.path + "/", with: "")
            return (name, try String(contentsOf: file, encoding: .utf8))
        }
    }

    @Test func everyExampleThatBuildsANetworkLoadsThroughThePrivacyGateOrAMediator() throws {
        let sources = try Self.sources()
        #expect(sources.count >= 6, "examples found: \(sources.map(\.name))")
        var building = 0
        for (name, text) in sources where Self.constructions.contains(where: text.contains) {
            building += 1
            #expect(
                text.contains("PrivacyGatedNetwork(") || text.contains("Mediator("),
                "\(name) builds a network but asks it outside the privacy gate")
        }
        #expect(building >= 4, "examples building a network: \(building)")
    }
}

import AdMediation
import ChartboostBanners
import TestSupport
import Testing

/// The Chartboost-style adapter against its JSON wire fixtures (`Fixtures/exemplary`, `Fixtures/supplemental`),
/// written from the Chartboost-style wire contract: the signed request it sends, the answers it accepts and refuses.
@Suite("Chartboost-style wire fixtures", .timeLimit(.minutes(2)))
struct ChartboostWireFixtureTests {
    static let fixtures = WireFixtures(near: #filePath)

    @Test("every wire fixture replays", arguments: fixtures.names)
    func replays(name: String) async throws {
        let replay = try await Self.fixtures.replay(name, settings: ["app_id", "destinations"]) { context in
            var configuration = ChartboostNetwork.Configuration(
                baseURL: context.baseURL, appID: context.setting("app_id", or: "cb_app_demo"),
                appSignature: "fixture-app-signature")
            if context.setting("destinations", or: "") == "strict" {
                configuration.destinations = .strict
            }
            return WireFixtureNetwork(
                ChartboostNetwork(configuration: configuration, http: context.http, clock: context.clock))
        }
        if let issue = replay.knownIssue {
            withKnownIssue(Comment(rawValue: issue)) {
                #expect(replay.mismatches.isEmpty, Comment(rawValue: replay.report))
            }
        } else {
            #expect(replay.mismatches.isEmpty, Comment(rawValue: replay.report))
        }
    }
}

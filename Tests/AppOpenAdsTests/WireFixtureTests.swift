import AdMediation
import AppOpenAds
import TestSupport
import Testing

/// The app-open adapter against its JSON wire fixtures (`Fixtures/exemplary`, `Fixtures/supplemental`), written from
/// the app-open wire contract: the request it sends, the answers it accepts and those it refuses.
@Suite("App-open wire fixtures", .timeLimit(.minutes(2)))
struct AppOpenWireFixtureTests {
    static let fixtures = WireFixtures(near: #filePath)

    @Test("every wire fixture replays", arguments: fixtures.names)
    func replays(name: String) async throws {
        let replay = try await Self.fixtures.replay(name, settings: ["destinations"]) { context in
            var configuration = AppOpenNetwork.Configuration(baseURL: context.baseURL)
            if context.setting("destinations", or: "") == "strict" {
                configuration.destinations = .strict
            }
            return WireFixtureNetwork(
                AppOpenNetwork(configuration: configuration, http: context.http, clock: context.clock))
        }
        expectNoMismatches(replay)
    }

    @Test("the fixtures folder holds exemplary and supplemental cases")
    func folderIsFound() {
        #expect(Self.fixtures.names.filter { $0.hasPrefix("exemplary/") }.count >= 2)
        #expect(Self.fixtures.names.filter { $0.hasPrefix("supplemental/") }.count >= 4)
    }
}

/// Records each mismatch of `replay` as an issue, under `withKnownIssue` when the fixture names a known issue.
func expectNoMismatches(_ replay: WireFixtureReplay, sourceLocation: SourceLocation = #_sourceLocation) {
    if let issue = replay.knownIssue {
        withKnownIssue(Comment(rawValue: issue)) {
            #expect(replay.mismatches.isEmpty, Comment(rawValue: replay.report), sourceLocation: sourceLocation)
        }
    } else {
        #expect(replay.mismatches.isEmpty, Comment(rawValue: replay.report), sourceLocation: sourceLocation)
    }
}

import AdMediation
import GrowthCatAds
import TestSupport
import Testing

/// The GrowthCat adapter against its JSON wire fixtures (`Fixtures/exemplary`, `Fixtures/supplemental`), written from
/// the GrowthCat wire contract: bootstrap then catalog, the answers it accepts, the ads it skips and the statuses it
/// maps (seed section 17).
@Suite("GrowthCat wire fixtures", .timeLimit(.minutes(2)))
struct GrowthCatWireFixtureTests {
    static let fixtures = WireFixtures(near: #filePath)

    @Test("every wire fixture replays", arguments: fixtures.names)
    func replays(name: String) async throws {
        let replay = try await Self.fixtures.replay(name) { context in
            var configuration = GrowthCatClient.Configuration(
                apiKey: "gc_test_fixture", baseURL: context.baseURL, eventQueuePath: queuePath())
            // Retries back off on the client's own clock: a few milliseconds, so the 5xx case replays quickly.
            configuration.retryBaseDelay = .milliseconds(1)
            configuration.maxRetryDelay = .milliseconds(5)
            configuration.retryJitter = 0
            let client = try GrowthCatClient(configuration: configuration, http: context.http)
            return WireFixtureNetwork(GrowthCatNetwork(client: client, clock: context.clock)) {
                await client.shutdown()
            }
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

import AdMediation
import MARSAds
import TestSupport
import Testing

/// The MARS adapter against its JSON wire fixtures (`Fixtures/exemplary`, `Fixtures/supplemental`), written from the
/// MARS wire behaviour: the `/v1/ads` request it sends, the answers it accepts, the items it drops and the statuses
/// it refuses.
@Suite("MARS wire fixtures", .timeLimit(.minutes(2)))
struct MarsWireFixtureTests {
    static let fixtures = WireFixtures(near: #filePath)

    @Test("every wire fixture replays", arguments: fixtures.names)
    func replays(name: String) async throws {
        let replay = try await Self.fixtures.replay(name) { context in
            let client = MozAdsClientBuilder(httpClient: context.http)
                .environment(.custom(baseURL: context.baseURL + "/v1/")).build()
            return WireFixtureNetwork(MarsNetwork(client: client, clock: context.clock)) { await client.shutdown() }
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

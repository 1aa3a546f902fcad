import AdMediation
import OpenRTBBidder
import TestSupport
import Testing

/// The OpenRTB bidder against its JSON wire fixtures (`Fixtures/exemplary`, `Fixtures/supplemental`), written from the
/// OpenRTB 2.6 subset the project speaks: the bid request it sends, the answers it accepts and the bids it discards.
@Suite("OpenRTB wire fixtures", .timeLimit(.minutes(2)))
struct OpenRTBWireFixtureTests {
    static let fixtures = WireFixtures(near: #filePath)

    @Test("every wire fixture replays", arguments: fixtures.names)
    func replays(name: String) async throws {
        let replay = try await Self.fixtures.replay(name, settings: ["app_bundle", "advertising_id"]) { context in
            var configuration = BiddingNetwork.Configuration(baseURL: context.baseURL)
            configuration.appBundle = context.setting("app_bundle", or: configuration.appBundle)
            if case .string(let ifa)? = context.settings["advertising_id"] {
                configuration.advertisingID = ifa
            }
            let network = BiddingNetwork(configuration: configuration, http: context.http, clock: context.clock)
            return WireFixtureNetwork(network) { await network.shutdown() }
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

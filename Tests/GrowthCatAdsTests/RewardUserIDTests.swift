import AdMediation
import AdMediationTesting
import Foundation
import Synchronization
import Testing

@testable import GrowthCatAds

@Suite("GrowthCat: every user who earns a reward gets it", .timeLimit(.minutes(2)))
struct RewardUserIDTests {
    /// Privacy states whose rules keep user ids out of ad requests and events.
    static let noUserIDs: [(String, PrivacySignals)] = {
        var denied = PrivacySignals()
        denied.appTracking = .denied
        var notDetermined = PrivacySignals()
        notDetermined.appTracking = .notDetermined
        var limited = PrivacySignals()
        limited.limitAdTracking = true
        return [
            ("ATT denied", denied), ("ATT not determined", notDetermined), ("limit ad tracking", limited),
            ("US Privacy opt-out", PrivacySignals(usPrivacy: "1YYN")), ("COPPA", PrivacySignals(coppa: true)),
        ]
    }()

    /// Issue 43: when the app passes an ATT status that is not `authorized` (most iOS users), a COPPA flag, an
    /// opt-out…, the privacy rules stripped the app's user id and no reward validation was ever sent. The seed:
    /// "appUserID is required for rewarded ads … If you omit it, the reward validation call will fail and no reward
    /// will be granted." The validation carries the app's account id; the catalog query and the events still carry
    /// none — bare, through a Mediator and through a nested one.
    @Test(arguments: [AdPathCase.bare, .mediated, .nested])
    func aUserWhoseUserIDThePrivacyRulesWithholdIsStillRewarded(path: AdPathCase) async throws {
        for (name, privacy) in Self.noUserIDs {
            let server = try ScriptedGrowthCat()
            let clock = ManualAdClock()
            let (client, curl) = try scriptedClient(server, clock: clock)
            let network = GrowthCatNetwork(client: client, clock: clock)
            let ad = try #require(
                try await path.load(network, userID: "account-42", privacy: privacy, clock: clock), "\(name)")
            let result = try await ad.presentFullScreen(
                on: ScriptPresenter { controls in
                    await controls.renderBegan()
                    await clock.advance(by: .seconds(2))  // the placement's minimum is 1 s
                    _ = await controls.closeTapped()
                }, clock: clock)
            _ = await client.flushAdEvents()
            #expect(result.reward == AdReward(name: "Coins", amount: 5), "\(name) \(path): \(result.log)")
            let validations = server.received("/reward/validate")
            #expect(validations.count == 1, "\(name) \(path)")
            let body = validations.first.flatMap { try? JSONSerialization.jsonObject(with: Data($0.body)) }
            #expect((body as? [String: Any])?["app_user_id"] as? String == "account-42", "\(name) \(path)")
            let catalog = server.received("/ads/catalog")
            #expect(!catalog.isEmpty && catalog.allSatisfy { !$0.target.contains("account-42") }, "\(name) \(path)")
            let events = server.received("/ads/events")
            #expect(!events.isEmpty, "\(name) \(path)")
            #expect(
                events.allSatisfy { !String(decoding: $0.body, as: UTF8.self).contains("account-42") },
                "\(name) \(path): no user id in the events")
            await curl.shutdown()
            server.server.stop()
        }
    }
}

extension RewardUserIDTests {
    /// Issue 43 item 2, through the API an app uses: a 20 s video in a placement whose minimum is 40 s. The seed:
    /// "Once the user has watched for minimum_view_seconds … the SDK calls POST /v1/ads/reward/validate with the
    /// actual elapsed seconds." The user stays on the end card: one validation, at 40 s, granted — bare, through a
    /// Mediator and through a nested one.
    @Test(arguments: [AdPathCase.bare, .mediated, .nested])
    func aVideoShorterThanTheMinimumIsValidatedOnceTheUserWasOnTheAdForTheMinimum(path: AdPathCase) async throws {
        let server = try ScriptedGrowthCat()
        server.script(
            "/ads/catalog",
            [
                .init(
                    status: 200,
                    body: #"{"cache_ttl_seconds":300,"ads":[{"placement":{"key":"p","format":"interstitial","#
                        + #""reward_enabled":true,"reward_name":"Coins","reward_amount":5,"minimum_view_seconds":40},"#
                        + #""campaign":{"id":"c"},"creative":{"id":"cr","creative_type":"video","duration_seconds":20,"#
                        + #""public_asset_url":"https://x/a.mp4"},"tracking":{"allocation_id":"a1","token":"t1"}}]}"#)
            ])
        let clock = ManualAdClock()
        let (client, curl) = try scriptedClient(server, clock: clock)
        defer { server.server.stop() }
        let network = GrowthCatNetwork(client: client, clock: clock)
        let ad = try #require(try await path.load(network, userID: "u1", privacy: PrivacySignals(), clock: clock))
        let result = try await ad.presentFullScreen(
            on: ScriptPresenter { controls in
                await controls.renderBegan()
                await controls.playbackStarted()
                await clock.advance(by: .seconds(20))
                await controls.playbackEnded()  // the end card; the close shows
                await clock.advance(by: .seconds(10))
                _ = await controls.refresh()
                await clock.advance(by: .seconds(10))  // 40 s on the ad
                _ = await controls.refresh()
                _ = await controls.closeTapped()
            }, clock: clock)
        #expect(result.reward == AdReward(name: "Coins", amount: 5), "\(path): \(result.log)")
        let validations = server.received("/reward/validate")
        #expect(validations.count == 1, "\(path)")
        let body = validations.first.flatMap { try? JSONSerialization.jsonObject(with: Data($0.body)) }
        #expect((body as? [String: Any])?["viewed_seconds"] as? Int == 40, "\(path)")
        await curl.shutdown()
    }

    /// Issue 43: `viewed_seconds` went on the wire as `2.000043136`; the seed's API is `viewedSeconds: Int`. A
    /// presentation's elapsed time is claimed in whole seconds, rounded down (2.999 s is 2), never negative.
    @Test func theViewedSecondsAreWholeSecondsRoundedDown() {
        #expect(GrowthCatFullScreenRules.wholeSeconds(.milliseconds(2_999)) == 2)
        #expect(GrowthCatFullScreenRules.wholeSeconds(.nanoseconds(2_000_043_136)) == 2)
        #expect(GrowthCatFullScreenRules.wholeSeconds(.seconds(40)) == 40)
        #expect(GrowthCatFullScreenRules.wholeSeconds(.milliseconds(-5)) == 0)
    }
}

/// The three paths an ad takes to the app, for the GrowthCat suites.
enum AdPathCase: String, Sendable, CaseIterable, CustomTestStringConvertible {
    case bare, mediated, nested
    var testDescription: String { rawValue }

    /// One interstitial of placement `p` from `network` by this path.
    func load(
        _ network: GrowthCatNetwork, userID: String, privacy: PrivacySignals, clock: ManualAdClock
    ) async throws -> LoadedAd? {
        let request = AdRequest(placement: "p", format: .interstitial, userID: userID, privacy: privacy)
        switch self {
        case .bare:
            return try await network.load(request).ad
        case .mediated, .nested:
            var mediator = try Mediator(
                id: "m", networks: [network],
                configuration: .init(placements: [
                    "m": PlacementConfiguration(
                        format: .interstitial, lines: [WaterfallLine(network: network.id, placement: "p")])
                ]), clock: clock)
            if self == .nested {
                mediator = try Mediator(
                    id: "outer", networks: [mediator],
                    configuration: .init(placements: [
                        "m": PlacementConfiguration(
                            format: .interstitial, lines: [WaterfallLine(network: "m", placement: "m")])
                    ]), clock: clock)
            }
            return try await mediator.load("m", userID: userID, privacy: privacy).ad
        }
    }
}

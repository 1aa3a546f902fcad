import AdMediation
import AdMediationTesting
import Foundation
import Testing

@testable import GrowthCatAds

/// A presenter that plays the test's script of renderer signals and taps (the GrowthCat suites' one).
struct ScriptPresenter: FullScreenPresenter {
    let script: @Sendable (FullScreenControls) async -> Void
    func present(_ ad: LoadedAd, controls: FullScreenControls) async { await script(controls) }
}

@Suite("GrowthCat: a presentation returns when the user is done", .timeLimit(.minutes(3)))
struct PresentationReturnTests {
    /// Issue 42: `presentFullScreen` returned ~10 s late when the events endpoint hung, because the end of the
    /// presentation waited for the final flush of the event queue. The reward (validated on its own lane) is granted
    /// and the call returns within the final delivery's grace on the presentation's clock; the events stay queued —
    /// bare and through a Mediator.
    @Test(arguments: [false, true])
    func aHungEventsEndpointHoldsNeitherTheRewardNorTheReturn(mediated: Bool) async throws {
        let server = try ScriptedGrowthCat()
        server.hold("/ads/events")
        let clock = ManualAdClock()
        // The events request would hang for an hour: the presentation must not wait for it.
        let (client, curl) = try scriptedClient(server, clock: clock) { $0.requestTimeout = .seconds(3600) }
        defer { server.server.stop() }
        let network = GrowthCatNetwork(client: client, clock: clock)
        let request = AdRequest(placement: "p", format: .interstitial, userID: "u1")
        let ad: LoadedAd
        if mediated {
            let mediator = try Mediator(
                networks: [network],
                configuration: .init(placements: [
                    "m": PlacementConfiguration(
                        format: .interstitial, lines: [WaterfallLine(network: network.id, placement: "p")])
                ]), clock: clock)
            ad = try #require(try await mediator.load("m", userID: "u1").ad)
        } else {
            ad = try #require(try await network.load(request).ad)
        }
        let done = LockedValue(false)
        let presentation = Task {
            defer { done.withLock { $0 = true } }
            return try await ad.presentFullScreen(
                on: ScriptPresenter { controls in
                    await controls.renderBegan()
                    await clock.advance(by: .seconds(2))
                    _ = await controls.closeTapped()
                }, clock: clock)
        }
        // The presentation's clock moves on (the final delivery's grace) while the events request hangs. The outcome
        // is that it returns at all: waiting for the request would take its hour; the 90 s is a hang guard for a busy
        // machine (20 s was passed with the suite, two CPU hogs and another build beside it), not a measure.
        let deadline = ContinuousClock.now + .seconds(90)
        while !done.withLock({ $0 }) && ContinuousClock.now < deadline {
            await clock.advance(by: .milliseconds(250))
            await Task.yield()
        }
        try #require(done.withLock { $0 }, "the presentation waited for the hung events request")
        let result = try await presentation.value
        #expect(result.reward == AdReward(name: "Coins", amount: 5), "\(result.log)")
        let last = try #require(result.log.last)
        guard case .finishFailed(let error) = last.kind else {
            Issue.record("the final delivery should have been given up: \(result.log)")
            return
        }
        #expect(error.code == .timeout && error.message.contains("stays queued"), "\(error)")
        #expect(await client.pendingEventCount > 0, "the events stay queued, not lost")
        await curl.shutdown()
    }
}

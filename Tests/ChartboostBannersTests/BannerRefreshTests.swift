import AdMediation
import AdMediationTesting
import AdNetworkConformance
import Foundation
import Testing

@testable import AdPresentation
@testable import ChartboostBanners

func shownIDs(_ events: [BannerRefreshController.Event]) -> [String] {
    events.compactMap { if case .shown(let id, _) = $0 { id } else { nil } }
}

/// Waits (by yielding) until the controller has shown `count` ads.
func waitForShown(_ controller: BannerRefreshController, _ count: Int) async {
    while shownIDs(await controller.history).count < count { await Task.pollPause() }
}

@Suite("Banner refresh controller", .timeLimit(.minutes(2)))
struct BannerRefreshTests {
    let request = AdRequest(placement: "slot", format: .banner(.standard))

    func make(
        _ steps: [ScriptedAdNetwork.Step] = [.fill()],
        policy: BannerRefreshPolicy = .init(preloadAfterImpression: false)
    )
        -> (BannerRefreshController, ScriptedAdNetwork, ManualAdClock)
    {
        let clock = ManualAdClock()
        let network = ScriptedAdNetwork(id: "n", clock: clock, script: ["slot": steps])
        return (
            BannerRefreshController(
                network: network, request: request, policy: policy, clock: clock, drawsEveryShownAd: true), network,
            clock
        )
    }

    @Test func refreshesEveryThirtySecondsByDefault() async {
        let (c, _, clock) = make()
        await c.start()
        await waitForShown(c, 1)
        #expect(await c.nextRefresh == .zero + .seconds(30))
        await clock.advance(by: .seconds(30))
        await waitForShown(c, 2)
        #expect(await c.nextRefresh == .zero + .seconds(60))
    }

    @Test func intervalUnderTenSecondsDisablesRefresh() async {
        #expect(BannerRefreshPolicy(interval: .seconds(9)).effectiveInterval == nil)
        let (c, network, _) = make(policy: .init(interval: .seconds(5), preloadAfterImpression: false))
        await c.start()
        await waitForShown(c, 1)
        #expect(await c.nextRefresh == nil)
        #expect(network.loadCount == 1)
    }

    @Test func intervalOverTwoHundredFortySecondsIsClamped() async {
        let (c, _, _) = make(policy: .init(interval: .seconds(600), preloadAfterImpression: false))
        await c.start()
        await waitForShown(c, 1)
        #expect(await c.nextRefresh == .zero + .seconds(240))
    }

    @Test func clickRefreshesAtOnce() async {
        let (c, network, clock) = make()
        await c.start()
        await waitForShown(c, 1)
        await clock.advance(by: .seconds(5))
        await c.adClicked()
        await waitForShown(c, 2)
        while network.reportedEvents.count < 3 { await Task.pollPause() }
        #expect(network.reportedEvents.map(\.event) == [.impression, .click, .impression])
        #expect(await c.nextRefresh == .zero + .seconds(35), "the timer restarts from the refresh")
    }

    @Test(arguments: BannerPauseReason.allCases)
    func pauseKeepsTheRemainingTimeAndResumeContinuesIt(reason: BannerPauseReason) async {
        let (c, network, clock) = make()
        await c.start()
        await waitForShown(c, 1)
        await clock.advance(by: .seconds(10))
        await c.pause(reason)
        #expect(await c.nextRefresh == nil)
        await clock.advance(by: .seconds(100))
        #expect(network.loadCount == 1, "no refresh while paused")
        await c.resume(reason)
        #expect(await c.nextRefresh == .zero + .seconds(130), "20 s were left at the pause")
        await clock.advance(by: .seconds(20))
        await waitForShown(c, 2)
    }

    @Test func timerResumesOnlyWhenEveryPauseReasonIsLifted() async {
        let (c, _, clock) = make()
        await c.start()
        await waitForShown(c, 1)
        await c.pause(.hidden)
        await c.pause(.background)
        await c.resume(.hidden)
        #expect(await c.nextRefresh == nil)
        await c.resume(.background)
        #expect(await c.nextRefresh == clock.now + .seconds(30))
    }

    @Test func backsOffToTwoHundredFortySecondsAfterFourFailures() async {
        let (c, _, clock) = make([.fail(AdError(.server(status: 503), "down"))])
        await c.start()
        var retries: [Duration] = []
        for failures in 1...5 {
            var next = await c.nextRefresh
            while await c.consecutiveFailures < failures || next == nil {
                await Task.pollPause()
                next = await c.nextRefresh
            }
            let due = next!
            retries.append(due - clock.now)
            await clock.advance(to: due)
        }
        #expect(retries == [.seconds(30), .seconds(30), .seconds(30), .seconds(240), .seconds(240)])
    }

    @Test func successAfterFailuresResetsTheBackoff() async {
        let (c, _, clock) = make([
            .fail(AdError(.network, "x")), .fail(AdError(.network, "x")), .fail(AdError(.network, "x")),
            .fail(AdError(.network, "x")), .fill(),
        ])
        await c.start()
        for failures in 1...4 {
            var next = await c.nextRefresh
            while await c.consecutiveFailures < failures || next == nil {
                await Task.pollPause()
                next = await c.nextRefresh
            }
            await clock.advance(to: next!)
        }
        await waitForShown(c, 1)
        #expect(await c.consecutiveFailures == 0)
        #expect(await c.nextRefresh == clock.now + .seconds(30))
    }

    @Test func nextAdIsPreloadedAfterAnImpressionAndShownAtTheRefresh() async {
        let (c, network, clock) = make(policy: .init())
        await c.start()
        await waitForShown(c, 1)
        while !(await c.hasPreloadedAd) && !Task.isCancelled { await Task.pollPause() }
        #expect(network.loadCount == 2)
        await clock.advance(by: .seconds(30))
        await waitForShown(c, 2)
        let shown = shownIDs(await c.history)
        #expect(shown[1].hasSuffix("-2"), "the preloaded ad is the one shown")
    }

    @Test func refreshesThroughTheMediator() async throws {
        let clock = ManualAdClock()
        let a = ScriptedAdNetwork(id: "a", clock: clock, fallback: .noFill())
        let b = ScriptedAdNetwork(id: "b", clock: clock, fallback: .fill(ecpm: 1))
        let mediator = try Mediator(
            networks: [a, b],
            configuration: .init(placements: [
                "slot": PlacementConfiguration(
                    format: .banner(BannerSize(width: 320, height: 50)),
                    lines: [
                        WaterfallLine(network: "a", placement: "a1"), WaterfallLine(network: "b", placement: "b1"),
                    ])
            ]), clock: clock)
        let c = BannerRefreshController(
            network: mediator, request: request, policy: .init(preloadAfterImpression: false), clock: clock,
            drawsEveryShownAd: true)
        await c.start()
        await waitForShown(c, 1)
        await clock.advance(by: .seconds(30))
        await waitForShown(c, 2)
        #expect(await c.history.contains(.shown(adID: "b-b1-2", network: "b")))
        // The second ad's impression goes down its event lane after it was shown: read the count once it is there (or
        // at a deadline far above it), not at the instant of the show.
        let deadline = ContinuousClock.now + .seconds(30)
        while b.reportedEvents.filter({ $0.event == .impression }).count < 2 && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(b.reportedEvents.filter { $0.event == .impression }.count == 2)
    }
}

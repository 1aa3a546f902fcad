import AdMediation
import AdMediationTesting
import Foundation
import Testing

@testable import AdPresentation
@testable import ChartboostBanners

/// Refresh hygiene (issue 31, item 3): fills that arrive already expired never make the slot reload back to back.
@Suite("Banner refresh hygiene", .timeLimit(.minutes(2)))
struct RefreshHygieneTests {
    let request = AdRequest(placement: "slot", format: .banner(.standard))

    func make(_ steps: [ScriptedAdNetwork.Step], policy: BannerRefreshPolicy = .init())
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

    /// Lets the controller settle after a clock step: until no load runs and its timer sleeps again, or until it has
    /// loaded more than `cap` times (a runaway loop), or a bounded number of polls (the deadline).
    func settle(_ c: BannerRefreshController, _ network: ScriptedAdNetwork, _ clock: ManualAdClock, cap: Int) async {
        for _ in 0..<5000 {
            if network.loadCount > cap { return }
            if await !c.isLoading, clock.sleeperCount >= 1 { return }
            await Task.pollPause()
        }
    }

    func unusable(_ events: [BannerRefreshController.Event]) -> [Duration] {
        events.compactMap { if case .unusableFill(_, _, let wait) = $0 { wait } else { nil } }
    }

    @Test func fillsExpiredOnArrivalBackOffExponentiallyWithAnEvent() async {
        let (c, network, clock) = make([.fill(ttl: .zero)])
        await c.start()
        await settle(c, network, clock, cap: 50)
        for second in 1...300 {
            await clock.advance(by: .seconds(1))
            await settle(c, network, clock, cap: 50)
            if second == 5 {
                #expect(network.loadCount <= 3, "5 s of always-expired fills: \(network.loadCount) loads")
            }
            if network.loadCount > 50 { break }
        }
        // Loads at 0, 2, 6, 14, 30, 62, 126, 254 s: logarithmic in the time, not linear (nor unbounded).
        #expect(network.loadCount >= 2, "the slot keeps trying")
        #expect(network.loadCount <= 10, "300 s of always-expired fills: \(network.loadCount) loads")
        let history = await c.history
        let waits = unusable(history)
        #expect(waits.count == network.loadCount, "one unusableFill event per unusable fill")
        #expect(Array(waits.prefix(4)) == [.seconds(2), .seconds(4), .seconds(8), .seconds(16)])
        #expect(waits.allSatisfy { $0 <= .seconds(240) }, "the back-off is bounded")
        #expect(shownIDs(history).isEmpty, "an expired fill is never shown")
        if case .unusableFill(_, let reason, _)? = history.first(where: {
            if case .unusableFill = $0 { true } else { false }
        }) {
            #expect(reason.contains("expired"))
        }
        await c.stop()
    }

    @Test func theBackOffIsBoundedByTheBackoffInterval() {
        let policy = BannerRefreshPolicy()
        #expect(policy.unusableFillBackoff(after: 1) == .seconds(2))
        #expect(policy.unusableFillBackoff(after: 3) == .seconds(8))
        #expect(policy.unusableFillBackoff(after: 8) == .seconds(240))
        #expect(policy.unusableFillBackoff(after: .max) == .seconds(240))
        #expect(BannerRefreshPolicy(minimumLoadInterval: .zero).effectiveMinimumLoadInterval == .seconds(1))
    }

    @Test func aRefreshNeverStartsSoonerThanTheMinimumIntervalAfterTheLastLoad() async {
        let (c, network, clock) = make([.fill()], policy: .init(preloadAfterImpression: false))
        await c.start()
        await waitForShown(c, 1)
        // A click refreshes, but a load started at this very instant: the refresh waits for the minimum interval.
        await c.adClicked()
        await settle(c, network, clock, cap: 50)
        #expect(network.loadCount == 1)
        #expect(await c.nextRefresh == .zero + .seconds(2))
        await clock.advance(by: .seconds(2))
        await waitForShown(c, 2)
        #expect(network.loadCount == 2)
    }

    @Test func aUsableFillEndsTheBackOff() async {
        let (c, network, clock) = make(
            [.fill(ttl: .zero), .fill(ttl: .zero), .fill()], policy: .init(preloadAfterImpression: false))
        await c.start()
        await settle(c, network, clock, cap: 50)
        await clock.advance(by: .seconds(2))
        await settle(c, network, clock, cap: 50)
        #expect(network.loadCount == 2)
        await clock.advance(by: .seconds(4))
        await waitForShown(c, 1)
        #expect(network.loadCount == 3)
        #expect(unusable(await c.history) == [.seconds(2), .seconds(4)])
        await c.stop()
    }
}

import AdMediation
import AdMediationTesting
import AdNetworkConformance
import AdPresentation
import AppOpenAds
import CurlTransport
import DemandSandbox
import Foundation
import Testing

func isPresent(_ result: AppOpenAdManager.ShowResult) -> Bool {
    if case .present = result { return true }
    return false
}

func reason(_ result: AppOpenAdManager.ShowResult) -> AppOpenAdManager.NotShownReason? {
    if case .notShown(let reason) = result { return reason }
    return nil
}

@Suite("App-open ad manager", .timeLimit(.minutes(2)))
struct AppOpenAdManagerTests {
    let unit = "unit"

    func manager(
        _ steps: [ScriptedAdNetwork.Step] = [.fill(ttl: nil)], policy: AppOpenAdManager.Policy = .init(),
        clock: ManualAdClock = ManualAdClock()
    )
        -> (AppOpenAdManager, ScriptedAdNetwork, ManualAdClock)
    {
        let network = ScriptedAdNetwork(id: "n", clock: clock, script: ["unit": steps])
        return (AppOpenAdManager(network: network, adUnit: unit, policy: policy, clock: clock), network, clock)
    }

    @Test func coldStartLoadsAhead() async {
        let (m, network, _) = manager()
        await m.applicationDidLaunch()
        await m.waitForLoad()
        #expect(await m.isAdAvailable)
        #expect(network.loadCount == 1)
    }

    @Test func neverLoadsWhileLoading() async {
        let (m, network, clock) = manager([.fill(latency: .seconds(2), ttl: nil)])
        await m.applicationDidLaunch()
        await clock.waitForSleepers(1)
        #expect(await m.isLoadingAd)
        await m.applicationDidLaunch()
        _ = await m.showAdIfAvailable()
        await clock.advance(by: .seconds(2))
        await m.waitForLoad()
        #expect(network.loadCount == 1)
        #expect(await m.isAdAvailable)
    }

    @Test func neverLoadsWhileHoldingAnUnexpiredAd() async {
        let (m, network, _) = manager()
        await m.loadAd()
        await m.loadAd()
        #expect(network.loadCount == 1)
    }

    @Test func adExpiresExactlyFourHoursAfterLoading() async {
        let (m, _, clock) = manager([.fill(ttl: .seconds(10 * 3600))])
        await m.loadAd()
        await clock.advance(by: .seconds(4 * 3600) - .nanoseconds(1))
        #expect(await m.isAdAvailable)
        await clock.advance(by: .nanoseconds(1))
        #expect(await m.isAdAvailable == false)
    }

    @Test func shorterAdTTLWins() async {
        let (m, _, clock) = manager([.fill(ttl: .seconds(3600))])
        await m.loadAd()
        await clock.advance(by: .seconds(3600))
        #expect(await m.isAdAvailable == false)
    }

    @Test func expiredAdIsDiscardedAndReloadedOnShow() async {
        let (m, network, clock) = manager([.fill(ttl: nil)])
        await m.applicationDidLaunch()
        await m.waitForLoad()
        await m.applicationDidEnterBackground()
        await clock.advance(by: .seconds(5 * 3600))
        let result = await m.applicationWillEnterForeground()
        #expect(reason(result) == .notReady)
        await m.waitForLoad()
        #expect(network.loadCount == 2)
        #expect(await m.history.contains { if case .expired = $0 { true } else { false } })
        #expect(await m.isAdAvailable)
    }

    @Test func foregroundPresentsTheHeldAd() async {
        let (m, _, _) = manager()
        await m.loadAd()
        let result = await m.applicationWillEnterForeground()
        #expect(isPresent(result))
        #expect(await m.isShowingAd)
        #expect(await m.isAdAvailable == false, "the ad is handed over, not kept")
    }

    @Test func notReadyReportsCompletionAndStartsALoad() async {
        let (m, network, _) = manager()
        let result = await m.applicationWillEnterForeground()
        #expect(reason(result) == .notReady)
        #expect(await m.history.first == .completed)
        await m.waitForLoad()
        #expect(network.loadCount == 1)
    }

    @Test func concurrentShowCallsPresentOnce() async {
        let (m, _, _) = manager()
        await m.applicationDidLaunch()
        await m.waitForLoad()
        let presented = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<5 { group.addTask { isPresent(await m.showAdIfAvailable()) } }
            var count = 0
            for await shown in group where shown { count += 1 }
            return count
        }
        #expect(presented == 1)
        #expect(reason(await m.showAdIfAvailable()) == .alreadyShowing)
    }

    @Test func dismissalClearsCompletesAndLoadsTheNext() async {
        // The next load takes a second of the manual clock, so it cannot end (and log `loaded`) before the check.
        let (m, network, clock) = manager([.fill(ttl: nil), .fill(latency: .seconds(1), ttl: nil)])
        await m.loadAd()
        _ = await m.applicationWillEnterForeground()
        await m.adDidDismiss()
        #expect(await m.isShowingAd == false)
        #expect(await m.history.last == .completed)
        await clock.waitForSleepers(1)
        await clock.advance(by: .seconds(1))
        await m.waitForLoad()
        #expect(network.loadCount == 2)
        #expect(await m.isAdAvailable)
    }

    @Test func failureToPresentClearsCompletesAndLoadsTheNext() async {
        // As above: the next load waits on the manual clock, so `completed` is the last event when it is checked.
        let (m, network, clock) = manager([.fill(ttl: nil), .fill(latency: .seconds(1), ttl: nil)])
        await m.loadAd()
        _ = await m.applicationWillEnterForeground()
        await m.adDidFailToPresent(AdError(.invalidState, "no window"))
        #expect(await m.isShowingAd == false)
        #expect(await m.history.last == .completed)
        await clock.waitForSleepers(1)
        await clock.advance(by: .seconds(1))
        await m.waitForLoad()
        #expect(network.loadCount == 2)
    }

    /// The impression once per shown ad, a click per tap (spec: "`impression` once per shown ad, `click` once per
    /// click").
    @Test func theImpressionIsReportedOnceAndEachTapIsAClick() async {
        let (m, network, _) = manager()
        await m.loadAd()
        _ = await m.applicationWillEnterForeground()
        await m.adDidPresent()
        await m.adDidPresent()
        await m.adDidClick()
        await m.adDidClick()
        #expect(network.reportedEvents.map(\.event) == [.impression, .click, .click])
    }

    @Test func coldStartShowsFromTheLoadingScreen() async {
        let (m, _, _) = manager()
        await m.applicationDidLaunch()
        await m.waitForLoad()
        #expect(isPresent(await m.showAdIfAvailable()))
    }

    @Test func coldStartNeverShowsOnceMainContentIsOnScreen() async {
        let (m, _, _) = manager()
        await m.applicationDidLaunch()
        await m.mainContentDidAppear()
        await m.waitForLoad()
        #expect(reason(await m.showAdIfAvailable()) == .mainContentVisible)
        #expect(await m.isAdAvailable, "the ad is kept for the next foreground")
    }

    @Test func noAdUntilTheAppWasOpenedEnoughTimes() async {
        let (m, _, _) = manager(policy: .init(opensBeforeFirstAd: 2))
        await m.loadAd()
        #expect(reason(await m.applicationWillEnterForeground()) == .tooFewOpens)
        await m.applicationDidEnterBackground()
        #expect(reason(await m.applicationWillEnterForeground()) == .tooFewOpens)
        await m.applicationDidEnterBackground()
        #expect(isPresent(await m.applicationWillEnterForeground()))
    }

    @Test func minimumIntervalBetweenAppOpenAds() async {
        let (m, _, clock) = manager(policy: .init(minimumInterval: .seconds(600)))
        await m.loadAd()
        #expect(isPresent(await m.applicationWillEnterForeground()))
        await m.adDidDismiss()
        await m.waitForLoad()
        await m.applicationDidEnterBackground()
        await clock.advance(by: .seconds(300))
        #expect(reason(await m.applicationWillEnterForeground()) == .tooSoon)
        await m.applicationDidEnterBackground()
        await clock.advance(by: .seconds(300))
        #expect(isPresent(await m.applicationWillEnterForeground()))
    }

    @Test func loadFailureIsRetriedOnTheFirstForegroundAfterTheBackOff() async {
        let (m, network, clock) = manager([.fail(AdError(.server(status: 503), "down")), .fill(ttl: nil)])
        await m.applicationDidLaunch()
        await m.waitForLoad()
        #expect(await m.isAdAvailable == false)
        await m.mainContentDidAppear()
        await m.applicationDidEnterBackground()
        #expect(reason(await m.applicationWillEnterForeground()) == .notReady)
        await m.waitForLoad()
        #expect(network.loadCount == 1, "within the 5 s back-off")
        await clock.advance(by: AppOpenAdManager.Policy().loadBackoff)
        await m.applicationDidEnterBackground()
        #expect(reason(await m.applicationWillEnterForeground()) == .notReady)
        await m.waitForLoad()
        await m.applicationDidEnterBackground()
        #expect(isPresent(await m.applicationWillEnterForeground()))
        #expect(network.loadCount == 2)
    }

    @Test func managerRunsOverTheMediatorAndTheSandbox() async throws {
        let sandbox = try await DemandSandbox.start(
            scenario: SandboxScenario(networks: ["appopen": NetworkScenario(fillRate: 0)]))
        let curl = CurlHTTPClient()
        let appOpen = AppOpenNetwork(configuration: .init(baseURL: sandbox.appOpenBaseURL), http: curl)
        let mediator = try Mediator(
            networks: [appOpen],
            configuration: .init(placements: [
                "launch": PlacementConfiguration(
                    format: .appOpen,
                    // Timeouts far above what two loopback answers need: on a busy machine the default 1 s per line
                    // expired and the rule under test (an ad through the mediator) was never reached.
                    lines: [
                        WaterfallLine(
                            network: "appopen", placement: "ca-app-pub-sandbox/app_open_main", timeout: .seconds(30)),
                        WaterfallLine(
                            network: "appopen", placement: AppOpenNetwork.testAdUnitID, timeout: .seconds(30)),
                    ], deadline: .seconds(60))
            ]))
        let m = AppOpenAdManager(network: mediator, adUnit: "launch")
        await m.applicationDidLaunch()
        await m.waitForLoad()
        guard case .present(let ad) = await m.showAdIfAvailable() else {
            Issue.record("expected an ad through the mediator: \(await m.history)")
            await curl.shutdown()
            await sandbox.shutdown()
            return
        }
        #expect(ad.networkID == "appopen")
        await m.adDidPresent()
        // The pings are sent in the background: read the wire once they were (a deadline far above it), not at
        // the end of shutdown's 2 s grace, which a busy machine can exceed.
        let drained = ContinuousClock.now + .seconds(30)
        while appOpen.pendingTracking > 0 && ContinuousClock.now < drained {
            try await Task.sleep(for: .milliseconds(10))
        }
        await appOpen.shutdown()
        #expect(sandbox.records.trackingHits.map { $0.query["e"] } == ["impression"])
        await curl.shutdown()
        await sandbox.shutdown()
    }
}

import AdMediation
import AdMediationTesting
import AdNetworkConformance
import AdPresentation
import AppOpenAds
import TestSupport
import Testing

@Suite("App-open manager lifecycle", .timeLimit(.minutes(2)))
struct AppOpenManagerLifecycleTests {
    func scripted(_ clock: ManualAdClock) -> ScriptedAdNetwork {
        ScriptedAdNetwork(
            id: "n", clock: clock, script: ["unit": [.fill(latency: .seconds(2), ttl: nil)]], fallback: .fill(ttl: nil))
    }

    @Test func aShutDownManagerLoadsAndShowsNothingForFiveMinutes() async {
        let clock = ManualAdClock()
        let network = scripted(clock)
        let manager = AppOpenAdManager(network: network, adUnit: "unit", clock: clock)
        await manager.applicationDidLaunch()  // starts a load that answers after 2 s
        await clock.waitForSleepers(1)
        await manager.shutdown()
        #expect(clock.sleeperCount == 0, "the load in flight, sleeping on the clock, ended with the shutdown")
        let loads = network.loadCount
        await advanceInSteps(clock, .seconds(300), step: .seconds(10))
        await manager.applicationWillEnterForeground()
        #expect(reason(await manager.showAdIfAvailable()) == .shutDown)
        await manager.loadAd()
        #expect(network.loadCount == loads, "no load after the shutdown")
        #expect(!(await manager.isAdAvailable), "the load in flight at the shutdown is not kept")
    }

    @Test func shutdownFinishesTheEventStream() async {
        let manager = AppOpenAdManager(network: scripted(ManualAdClock()), adUnit: "unit", clock: ManualAdClock())
        await manager.shutdown()
        var count = 0
        for await _ in manager.events { count += 1 }  // ends: the stream is finished
        #expect(count == 0)
    }

    @Test func aReleasedManagerIsFreedWhileItsLoadIsInFlightAndNothingFollows() async {
        let clock = ManualAdClock()
        let network = scripted(clock)
        weak var released: AppOpenAdManager?
        do {
            let manager = AppOpenAdManager(network: network, adUnit: "unit", clock: clock)
            released = manager
            await manager.applicationDidLaunch()
            await clock.waitForSleepers(1)
        }
        // The load was registered with the clock before the release; the release is waited for, not assumed after
        // some scheduler turns.
        #expect(await pollUntil { released == nil }, "its own load task does not keep the manager alive")
        #expect(await pollUntil { clock.sleeperCount == 0 }, "its load in flight ended with it")
        let loads = network.loadCount
        await advanceInSteps(clock, .seconds(300), step: .seconds(10))
        #expect(network.loadCount == loads)
    }

    @Test func historyIsBounded() async {
        let clock = ManualAdClock()
        let manager = AppOpenAdManager(
            network: ScriptedAdNetwork(id: "n", clock: clock, script: [:], fallback: .noFill()), adUnit: "unit",
            clock: clock)
        await manager.applicationWillEnterForeground()
        for _ in 0..<(AppOpenAdManager.historyLimit + 200) {
            _ = await manager.showAdIfAvailable()
            await manager.waitForLoad()
        }
        #expect(await manager.history.count == AppOpenAdManager.historyLimit)
    }
}

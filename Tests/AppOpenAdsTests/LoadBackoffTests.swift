import AdMediation
import AdMediationTesting
import AdPresentation
import Testing

/// Issue 45: `AppOpenAdManager` reloaded without back-off — 1 000 foreground cycles over a failing network made
/// 1 000 loads. Google's guidance for app-open ads: retry failed loads with exponential back-off.
@Suite("App-open loads back off after failures", .timeLimit(.minutes(1)))
struct LoadBackoffTests {
    private func failingManager(_ clock: ManualAdClock) -> (AppOpenAdManager, ScriptedAdNetwork) {
        let network = ScriptedAdNetwork(id: "n", clock: clock, script: [:], fallback: .noFill())
        return (AppOpenAdManager(network: network, adUnit: "unit", clock: clock), network)
    }

    @Test func aThousandForegroundsOverAFailingNetworkMakeOneLoadWithinTheBackOff() async {
        let clock = ManualAdClock()
        let (manager, network) = failingManager(clock)
        for _ in 0..<1000 {
            await manager.applicationDidEnterBackground()
            _ = await manager.applicationWillEnterForeground()
            await manager.waitForLoad()
        }
        #expect(network.loadCount == 1, "the first foreground's load failed; the next waits 5 s")
    }

    @Test func theBackOffDoublesWithEachFailureAndAnExplicitLoadIsNotHeld() async {
        let clock = ManualAdClock()
        let (manager, network) = failingManager(clock)
        func foreground() async {
            await manager.applicationDidEnterBackground()
            _ = await manager.applicationWillEnterForeground()
            await manager.waitForLoad()
        }
        await foreground()  // load 1 fails: 5 s
        await clock.advance(by: .seconds(5))
        await foreground()  // load 2 fails: 10 s
        #expect(network.loadCount == 2)
        await clock.advance(by: .seconds(9))
        await foreground()
        #expect(network.loadCount == 2, "9 s into a 10 s back-off")
        await clock.advance(by: .seconds(1))
        await foreground()
        #expect(network.loadCount == 3)
        await manager.loadAd()  // the app's own call
        #expect(network.loadCount == 4)
    }
}

import AdMediation
import AdMediationTesting
import AdNetworkConformance
import AppOpenAds
import Foundation
import Testing

@Suite("App-open manager: the seed's own pattern", .timeLimit(.minutes(2)))
struct AppOpenSeedPatternTests {
    func manager(policy: AppOpenAdManager.Policy = .init()) -> (AppOpenAdManager, ScriptedAdNetwork) {
        let clock = ManualAdClock()
        let network = ScriptedAdNetwork(id: "n", clock: clock, fallback: .fill(ttl: nil))
        return (AppOpenAdManager(network: network, adUnit: "unit", policy: policy, clock: clock), network)
    }

    /// Seed: "When the application becomes active, call showAdIfAvailable() to show an ad if one is available, or
    /// loads a new one." — `func applicationDidBecomeActive(_:) { AppOpenAdManager.shared.showAdIfAvailable() }`.
    @Test func anAppThatOnlyCallsShowAdIfAvailableWhenItBecomesActiveGetsAnAdLoadedAndShown() async {
        let (m, network) = manager()
        #expect(reason(await m.showAdIfAvailable()) == .notReady, "the first activation has no ad yet…")
        await m.waitForLoad()
        #expect(network.loadCount == 1, "…and loads one")
        #expect(isPresent(await m.showAdIfAvailable()), "the next activation shows it")
    }

    @Test func aPolicyRefusalStillLoadsAheadWhenNoAdIsHeld() async {
        let (m, network) = manager(policy: .init(opensBeforeFirstAd: 2))
        #expect(reason(await m.showAdIfAvailable()) == .tooFewOpens)
        await m.waitForLoad()
        #expect(network.loadCount == 1)
        #expect(await m.isAdAvailable, "the ad is ready for the open the policy allows")
    }

    @Test func aPolicyRefusalWithAnAdHeldDoesNotLoadAnother() async {
        let (m, network) = manager(policy: .init(opensBeforeFirstAd: 5))
        _ = await m.showAdIfAvailable()
        await m.waitForLoad()
        _ = await m.showAdIfAvailable()
        await m.waitForLoad()
        #expect(network.loadCount == 1, "one ad at a time")
    }
}

import AdMediation
import AdMediationTesting
import AdPresentation
import AppOpenAds
import Testing

/// The app-open manager's events come from what the app reports, through the core's ledger: an impression when the
/// ad is on screen (`adDidRecordImpression` in the seed follows the presentation), a click only on an ad that was
/// seen, `ad_closed` once at the dismissal, and nothing for an ad that failed to present.
@Suite("App-open: only what happened is counted", .timeLimit(.minutes(1)))
struct AppOpenEventTruthTests {
    func presentedManager() async -> (AppOpenAdManager, ScriptedAdNetwork) {
        let clock = ManualAdClock()
        let network = ScriptedAdNetwork(id: "n", clock: clock, fallback: .fill(ttl: nil))
        let manager = AppOpenAdManager(network: network, adUnit: "unit", clock: clock)
        await manager.loadAd()
        _ = await manager.applicationWillEnterForeground()
        return (manager, network)
    }

    func events(_ network: ScriptedAdNetwork) -> [AdEvent] { network.reportedEvents.map(\.event) }

    @Test func aClickBeforeTheAdIsOnScreenIsNotTracked() async {
        let (m, network) = await presentedManager()
        #expect(await m.isShowingAd, "the ad was handed to the app")
        await m.adDidClick()  // before adDidPresent: the user cannot have seen it
        #expect(!events(network).contains(.click), "no click for an ad nobody saw")
        await m.adDidPresent()
        await m.adDidClick()
        #expect(events(network) == [.impression, .click])
    }

    @Test func theDismissalOfASeenAdReportsAdClosedOnce() async {
        let (m, network) = await presentedManager()
        await m.adDidPresent()
        await m.adDidDismiss()
        await m.adDidDismiss()
        #expect(events(network) == [.impression, .closed])
    }

    @Test func anAdThatFailedToPresentCountsNothingAfterwards() async {
        let (m, network) = await presentedManager()
        await m.adDidFailToPresent(AdError(.invalidState, "no window"))
        await m.adDidPresent()
        await m.adDidClick()
        await m.adDidDismiss()
        #expect(events(network).isEmpty, "an ad that never showed earns no impression, click or close")
    }

    /// Spec (app-open tracking): "`click` once per click" — each tap on the shown ad is a click (issue 42: the second
    /// was dropped as a repeat).
    @Test func aSecondClickOnTheSameAppOpenAdIsASecondClick() async {
        let (m, network) = await presentedManager()
        await m.adDidPresent()
        await m.adDidClick()
        await m.adDidClick()
        #expect(events(network).filter { $0 == .click }.count == 2, "one click per tap")
    }
}

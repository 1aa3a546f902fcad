import AdMediation
import AdMediationTesting
import AdNetworkConformance
import AdPresentation
import AppOpenAds
import CurlTransport
import DemandSandbox
import Foundation
import TestSupport
import Testing

/// An app written exactly as the seed shows it: `applicationDidBecomeActive` calls `showAdIfAvailable()`, the app
/// renders what it is given, and `adDidDismissFullScreenContent` is reported back (the manager then loads the next
/// ad, as the seed's delegate does with `Task { await loadAd() }`). It never reports backgrounding.
struct SeedPatternApp {
    let manager: AppOpenAdManager
    /// How many ads the app was handed to present.
    var shows = 0

    /// `applicationDidBecomeActive(_:)`; the user dismisses a presented ad at once. Returns whether an ad showed.
    @discardableResult
    mutating func didBecomeActive() async -> Bool {
        guard case .present = await manager.showAdIfAvailable() else { return false }
        shows += 1
        await manager.adDidPresent()
        await manager.adDidDismiss()  // adDidDismissFullScreenContent
        return true
    }
}

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

    /// Seed: "When the application becomes active, call showAdIfAvailable() to show an ad if one is available, or
    /// loads a new one." and, on dismissal, "you'll want to request the next app open ad once the first one finishes
    /// presenting." — so every activation after a dismissal shows the ad loaded since, not only the first.
    @Test func theSeedPatternShowsAnAdOnEveryActivationOnceTheNextOneIsLoaded() async {
        let (m, network) = manager()
        var app = SeedPatternApp(manager: m)
        #expect(await app.didBecomeActive() == false, "the first activation has no ad yet and loads one")
        for activation in 2...5 {
            await m.waitForLoad()  // the ad loaded after the launch, then after each dismissal
            #expect(await app.didBecomeActive(), "activation \(activation) shows the ad loaded since")
        }
        #expect(app.shows == 4, "one ad per activation once one is loaded, not one per process")
        await m.waitForLoad()
        #expect(network.loadCount == 5, "one load after the launch, then one after each dismissal")
        #expect(network.reportedEvents.filter { $0.event == .impression }.count == 4)
    }

    /// Seed: "If your app has completed loading and has sent the user to the main content of your app, don't show
    /// the ad." — that holds for the launch; the activations after it are foregrounds, as the seed's pattern has them.
    @Test func afterAColdStartThatReachedTheMainContentTheNextActivationsShowAds() async {
        let (m, _) = manager()
        await m.applicationDidLaunch()
        await m.mainContentDidAppear()
        await m.waitForLoad()
        var app = SeedPatternApp(manager: m)
        #expect(await app.didBecomeActive() == false, "the launch's own activation: the main content is on screen")
        #expect(await m.isAdAvailable, "the ad is kept")
        #expect(await app.didBecomeActive(), "the next activation is a foreground")
        await m.waitForLoad()
        #expect(await app.didBecomeActive())
        #expect(app.shows == 2)
    }

    /// Seed (best practices): "Wait to show your first app open ad until after your users have used your app a few
    /// times." — with the seed's pattern, each activation is an open.
    @Test func theSeedPatternCountsEveryActivationAsAnOpen() async {
        let (m, _) = manager(policy: .init(opensBeforeFirstAd: 2))
        var app = SeedPatternApp(manager: m)
        #expect(await app.didBecomeActive() == false, "open 1")
        await m.waitForLoad()
        #expect(await app.didBecomeActive() == false, "open 2")
        #expect(await app.didBecomeActive(), "open 3 shows the ad")
    }

    /// An app that reports its life cycle keeps one ad per foreground: after the dismissal its main content is on
    /// screen until it goes to the background.
    @Test func anAppThatReportsItsLifeCycleGetsOneAdPerForeground() async {
        let (m, _) = manager()
        await m.loadAd()
        #expect(isPresent(await m.applicationWillEnterForeground()))
        await m.adDidDismiss()
        await m.waitForLoad()
        #expect(reason(await m.showAdIfAvailable()) == .mainContentVisible, "same foreground")
        await m.applicationDidEnterBackground()
        #expect(isPresent(await m.showAdIfAvailable()), "the next foreground")
    }

    /// The seed's pattern over real HTTP: the sandbox's test ad unit ("specially configured to return test ads for
    /// every request") fills every load, and each activation after a dismissal shows the next ad.
    @Test func theSeedPatternOverTheSandboxShowsOneAdPerActivationAndTracksEachImpression() async throws {
        let sandbox = try await DemandSandbox.start(scenario: SandboxScenario())
        let curl = CurlHTTPClient()
        let clock = ManualAdClock()
        var configuration = AppOpenNetwork.Configuration(baseURL: sandbox.appOpenBaseURL)
        configuration.defaultTimeout = HangGuard.request  // a live sandbox: a hang guard, not the 10 s default
        let network = AppOpenNetwork(configuration: configuration, http: curl, clock: clock)
        let m = AppOpenAdManager(network: network, adUnit: AppOpenNetwork.testAdUnitID, clock: clock)
        var app = SeedPatternApp(manager: m)
        await app.didBecomeActive()
        for _ in 0..<3 {
            await m.waitForLoad()
            await app.didBecomeActive()
        }
        await m.shutdown()
        // The pings are sent in the background: read the wire once they were (a hang guard), not at the end of
        // shutdown's 2 s grace, which a busy machine can exceed.
        #expect(await HangGuard.until { network.pendingTracking == 0 })
        await network.shutdown()
        await curl.shutdown()
        await sandbox.shutdown()
        #expect(app.shows == 3)
        let impressions = sandbox.records.trackingHits.filter { $0.query["e"] == "impression" }
        #expect(impressions.count == 3)
        #expect(Set(impressions.map { $0.query["ad"] ?? "" }).count == 3, "three different ads")
    }
}

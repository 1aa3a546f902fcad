import AdMediation
import AdPresentation
import Observation

/// App-open ads as an observable model: the app feeds it the scene phase (SwiftUI's `scenePhase`, a UIKit scene
/// delegate's callbacks) and its launch, draws ``creative`` full screen while ``isShowing``, and reports what the
/// screen did (``presented()``, ``tapped()``, ``dismissed()``).
///
/// The model owns no rule: its `AppOpenAdManager` loads ahead, expires ads, applies the policies (opens before the
/// first ad, minimum interval, cold starts only from the loading screen) and decides the events. Only a return from
/// the background is a foreground: an `inactive` spell without the background (a system alert, the app switcher)
/// shows nothing.
/// The model runs no task of its own; ``shutdown()`` ends the manager's.
@MainActor
@Observable
public final class AppOpenAdModel {
    /// The app's scene phase, as SwiftUI's `ScenePhase` (this module does not import SwiftUI).
    public enum ScenePhase: Hashable, Sendable {
        /// In the foreground and interactive.
        case active
        /// In the foreground, not interactive (a system alert, the app switcher).
        case inactive
        /// In the background.
        case background
    }

    /// The app-open ad to draw full screen; nil when none is showing.
    public private(set) var creative: AdCreative?
    /// Whether an app-open ad is on screen (from its hand-over to ``dismissed()`` or ``failedToPresent(_:)``).
    public private(set) var isShowing = false
    /// Why the last chance to show an ad showed none (`not_ready`, `too_soon`, …); nil after an ad was shown.
    public private(set) var lastNotShown: AppOpenAdManager.NotShownReason?

    /// The rules, for what the model does not publish (its `history`, `events`, `isAdAvailable`).
    @ObservationIgnored public let manager: AppOpenAdManager
    /// The app went to the background and has not become active since.
    @ObservationIgnored private var inBackground = false

    /// A model over `manager` (made with the clock the network loads on).
    public init(manager: AppOpenAdManager) {
        self.manager = manager
    }

    /// A model over a new manager loading `adUnit` from `network` under `policy` on `clock`.
    public convenience init(
        network: any AdNetwork, adUnit: String, policy: AppOpenAdManager.Policy = AppOpenAdManager.Policy(),
        clock: any AdClock = SystemAdClock()
    ) {
        self.init(manager: AppOpenAdManager(network: network, adUnit: adUnit, policy: policy, clock: clock))
    }

    // MARK: The app's life cycle

    /// Cold start: the app launched and shows its loading screen. Counts an open and loads ahead.
    public func launched() async { await manager.applicationDidLaunch() }

    /// From the loading screen of a cold start (or any moment the app's own flow allows): shows the loaded ad if the
    /// rules allow.
    public func showIfAvailable() async { publish(await manager.showAdIfAvailable()) }

    /// The main content is on screen: no app-open ad until the next return from the background.
    public func mainContentAppeared() async { await manager.mainContentDidAppear() }

    /// The scene phase changed (SwiftUI: `.onChange(of: scenePhase)`). Entering the background tells the manager;
    /// becoming active after the background is a foreground, where a loaded ad shows if the rules allow.
    public func scenePhaseChanged(to newPhase: ScenePhase) async {
        switch newPhase {
        case .background:
            guard !inBackground else { return }
            inBackground = true
            await manager.applicationDidEnterBackground()
        case .active:
            // SwiftUI passes through `inactive` on the way back (background → inactive → active).
            guard inBackground else { return }
            inBackground = false
            publish(await manager.applicationWillEnterForeground())
        case .inactive:
            break
        }
    }

    // MARK: The screen's reports

    /// The ad is on screen (it began to render): the impression counts now.
    public func presented() async { await manager.adDidPresent() }

    /// The user tapped the ad (after the app opened its click-through).
    public func tapped() async { await manager.adDidClick() }

    /// The ad left the screen: the model clears it, the manager reports the close and loads the next.
    public func dismissed() async {
        await manager.adDidDismiss()
        clear()
    }

    /// The ad could not be shown: nothing is counted for it; the manager loads the next.
    public func failedToPresent(_ error: any Error) async {
        await manager.adDidFailToPresent(error)
        clear()
    }

    /// Ends the manager (its load in progress, its ads): nothing is loaded or shown afterwards.
    public func shutdown() async {
        await manager.shutdown()
        clear()
    }

    private func publish(_ result: AppOpenAdManager.ShowResult) {
        switch result {
        case .present(let ad):
            creative = ad.creative
            isShowing = true
            lastNotShown = nil
        case .notShown(let reason):
            lastNotShown = reason
        }
    }

    private func clear() {
        creative = nil
        isShowing = false
    }
}

import AdMediation

// The manager's public value types: its policy, what a show request returns, and the events it reports.

extension AppOpenAdManager {
    /// Best-practice policies.
    public struct Policy: Sendable, Hashable {
        /// The first N opens of the app never show an app-open ad. Default 0.
        public var opensBeforeFirstAd: Int = 0
        /// Minimum time between two app-open ads. Default none.
        public var minimumInterval: Duration = .zero
        /// Longest an ad stays showable after loading, whatever its own TTL. Default 4 hours.
        public var maximumAge: Duration = .seconds(4 * 3600)
        /// After a failed load (an error or no fill) the manager starts no load of its own (on a foreground, a
        /// dismissal, a launch) before this long, doubling with each failure in a row up to ``maximumLoadBackoff``;
        /// a load that fills resets it. ``AppOpenAdManager/loadAd()``, the app's explicit call, is not held. Default
        /// 5 s (Google's guidance for app-open and full-screen ads: retry failed loads with exponential back-off).
        public var loadBackoff: Duration = .seconds(5)
        /// The longest back-off between the manager's own loads. Default 10 minutes.
        public var maximumLoadBackoff: Duration = .seconds(600)

        /// The defaults.
        public init(
            opensBeforeFirstAd: Int = 0, minimumInterval: Duration = .zero, maximumAge: Duration = .seconds(4 * 3600)
        ) {
            self.opensBeforeFirstAd = opensBeforeFirstAd
            self.minimumInterval = minimumInterval
            self.maximumAge = maximumAge
        }
    }

    /// Why ``showAdIfAvailable()`` did not present.
    public enum NotShownReason: String, Sendable, Hashable {
        /// An ad is already on screen.
        case alreadyShowing = "already_showing"
        /// No unexpired ad is loaded (a load was started).
        case notReady = "not_ready"
        /// The main content is on screen: app-open ads show only on a foreground or from a cold-start loading screen.
        case mainContentVisible = "main_content_visible"
        /// The app has not been opened often enough yet.
        case tooFewOpens = "too_few_opens"
        /// The last app-open ad was too recent.
        case tooSoon = "too_soon"
        /// The manager was shut down (``AppOpenAdManager/shutdown()``): it loads and shows nothing more.
        case shutDown = "shut_down"
    }

    /// The outcome of ``showAdIfAvailable()``.
    public enum ShowResult: Sendable {
        /// Present this ad now, then report ``adDidPresent()`` (or ``adDidFailToPresent(_:)``).
        case present(LoadedAd)
        /// Nothing to show; completion was reported unless the reason is ``NotShownReason/alreadyShowing``.
        case notShown(NotShownReason)
    }

    /// What the manager did, in order.
    public enum Event: Sendable, Equatable {
        /// An ad was loaded.
        case loaded(adID: String)
        /// A load failed (or did not fill); the first foreground after the back-off (``Policy/loadBackoff``) tries
        /// again.
        case loadFailed(String)
        /// An expired ad was discarded.
        case expired(adID: String)
        /// An ad was handed to the app for presentation.
        case presenting(adID: String)
        /// The impression was reported.
        case impression(adID: String)
        /// A click was reported.
        case click(adID: String)
        /// The app-open life cycle is complete (dismissed, failed to present, or nothing shown): continue.
        case completed
    }
}

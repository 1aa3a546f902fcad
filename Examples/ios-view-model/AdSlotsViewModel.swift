// SAMPLE CODE — an illustration for the "Integrating on iOS" article, not part of the library. It is compiled (and
// run headless by main.swift) on Linux, so it imports no UIKit or SwiftUI: a SwiftUI view observes it
// (`@Observable`), a UIKit view controller calls the same methods. Not verified on a device.
import AdMediation
import AdPresentation
import Observation

/// One screen's ads: a banner slot that refreshes itself and an interstitial shown between levels.
///
/// The view model owns no rule: `BannerRefreshController` decides when the banner refreshes (paused while hidden,
/// in the background or covered by a full-screen ad), and `presentFullScreen(on:)` decides the full-screen events,
/// the close button and the reward from what the presenter reports. The view model only maps the app's lifecycle and
/// the views' appearance onto them, and publishes what the views draw.
@MainActor
@Observable
final class AdSlotsViewModel {
    /// Where the interstitial is.
    enum InterstitialState: Equatable {
        case idle
        case loading
        case ready
        case showing
        case unavailable(String)
    }

    /// The creative the banner view shows (nil: the slot is empty).
    private(set) var bannerCreativeID: String?
    /// The interstitial's state, for the "Continue" button.
    private(set) var interstitial: InterstitialState = .idle
    /// What the last full-screen ad granted.
    private(set) var lastReward: AdReward?

    @ObservationIgnored private let network: any AdNetwork
    @ObservationIgnored private let interstitialRequest: AdRequest
    @ObservationIgnored private let banner: BannerRefreshController
    @ObservationIgnored private let clock: any AdClock
    @ObservationIgnored private let flush: @Sendable () async -> Void
    @ObservationIgnored private var loaded: LoadedAd?
    @ObservationIgnored private var bannerEvents: Task<Void, Never>?

    /// `network` is what the app loads through: a `Mediator` over its adapters, or one adapter's network behind
    /// `PrivacyGatedNetwork` (the same consent gate as a mediator's lines).
    /// `flush` sends what the adapters queued (GrowthCat's `flushAdEvents()`); it runs when the app goes to the
    /// background.
    init(
        network: any AdNetwork, bannerPlacement: String, interstitialPlacement: String,
        clock: any AdClock = SystemAdClock(), flush: @escaping @Sendable () async -> Void = {}
    ) {
        self.network = network
        self.clock = clock
        self.flush = flush
        interstitialRequest = AdRequest(placement: interstitialPlacement, format: .interstitial)
        banner = BannerRefreshController(
            network: network, request: AdRequest(placement: bannerPlacement, format: .banner(.standard)),
            clock: clock)
    }

    // MARK: Banner view (SwiftUI `.onAppear`/`.onDisappear`, UIKit `viewDidAppear`/`viewDidDisappear`)

    /// The banner view is on screen: start (or resume) the slot and follow what it shows.
    func bannerAppeared() async {
        if bannerEvents == nil {
            let events = banner.events
            bannerEvents = Task { [weak self] in
                for await event in events {
                    guard case .shown(let adID, _) = event else { continue }
                    self?.bannerCreativeID = adID
                }
            }
            await banner.start()
        }
        await banner.resume(.hidden)
    }

    /// The banner view drew creative `adID` (its first frame is visible): the impression is counted now, not when the
    /// slot picked the ad.
    func bannerDrawn(adID: String) async { await banner.drawn(adID: adID) }

    /// The banner view left the screen: its timer pauses with the time left.
    func bannerDisappeared() async { await banner.pause(.hidden) }

    /// The user tapped the banner (after the app opened the click-through).
    func bannerTapped() async { await banner.adClicked() }

    // MARK: Interstitial

    /// Loads the interstitial ahead of the moment it is shown.
    func loadInterstitial() async {
        guard interstitial != .loading, interstitial != .ready else { return }
        interstitial = .loading
        do {
            switch try await network.load(interstitialRequest) {
            case .filled(let ad):
                loaded = ad
                interstitial = .ready
            case .noFill:
                interstitial = .unavailable("no fill")
            }
        } catch {
            interstitial = .unavailable("\(error)")
        }
    }

    /// Shows the loaded interstitial on `presenter` (in UIKit, one that presents a view controller and returns on
    /// dismissal). The banner is paused while the ad covers it.
    func showInterstitial(on presenter: some FullScreenPresenter) async {
        guard let ad = loaded else { return }
        loaded = nil
        interstitial = .showing
        await banner.pause(.coveredByFullScreenAd)
        do {
            lastReward = try await ad.presentFullScreen(on: presenter, clock: clock).reward
        } catch {
            interstitial = .unavailable("\(error)")
        }
        await banner.resume(.coveredByFullScreenAd)
        if interstitial == .showing { interstitial = .idle }
    }

    // MARK: App lifecycle (`scenePhase` in SwiftUI, the scene delegate in UIKit)

    /// The app went to the background: timers pause, and what the adapters queued is sent while the app may still
    /// run (ask for background time with `beginBackgroundTask` around this call).
    func didEnterBackground() async {
        await banner.pause(.background)
        await flush()
    }

    /// The app is back in the foreground: timers resume with the time they had left.
    func willEnterForeground() async { await banner.resume(.background) }

    /// The screen is gone for good.
    func tearDown() async {
        await banner.stop()
        bannerEvents?.cancel()
        loaded?.invalidate()
    }
}

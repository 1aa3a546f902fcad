import AdMediation
import AdPresentation

/// A banner with the seed's model: `cache()`, `show()`, `isCached`, `automaticallyRefreshesContent` (default true)
/// and the delegate events, including the click-confirmation gate. Rendering is the app's: it draws
/// ``displayedAd``, says so with ``drawn(adID:)`` (the impression) and reports clicks with ``click()``.
///
/// With auto-refresh on, `show()` hands the slot to a ``BannerRefreshController`` (30 s default, refresh after a
/// click, pauses); with it off, the app drives `cache()`/`show()` itself.
public actor ChartboostBanner {
    /// The banner's size.
    public nonisolated let size: BannerSize
    /// The banner's location.
    public nonisolated let location: String
    private let network: any AdNetwork
    private let request: AdRequest
    private let clock: any AdClock
    private let refreshPolicy: BannerRefreshPolicy
    private weak var delegate: (any ChartboostBannerDelegate)?
    private var cached: LoadedAd?
    private var shown: LoadedAd?
    /// ``drawn(adID:)`` was called for `shown` (manual mode).
    private var shownDrawn = false
    /// Every ad shown counts as drawn at once (tests and tools without a renderer).
    private let drawsEveryShownAd: Bool
    private var controller: BannerRefreshController?
    private var controllerEvents: Task<Void, Never>?
    /// A click in progress: the ad on screen when it was tapped (the click is its own, whatever shows later) and the
    /// refresh controller holding its refresh, if any.
    private struct Click {
        let id: Int
        let ad: LoadedAd
        let controller: BannerRefreshController?
    }
    private enum ClickState {
        /// The tapped ad of click `id` is being taken from the refresh controller.
        case starting(id: Int)
        /// Waiting for the app's confirmation.
        case pending(Click)
        /// The click is being reported.
        case reporting(Click)
    }
    private var clickState: ClickState?
    /// Ads that left the screen (manual mode) while a click on them was in progress: invalidated once it is done.
    private var retiredWhileClicked: [LoadedAd] = []
    private var clickedAd: LoadedAd?
    private var clickSerial = 0
    /// Whether the banner refreshes by itself after `show()`. Default true.
    public private(set) var automaticallyRefreshesContent = true

    /// Creates a banner of `size` at `location`, loading from `network` (a Chartboost network or a mediator).
    public init(
        size: BannerSize, location: String, network: any AdNetwork, delegate: (any ChartboostBannerDelegate)? = nil,
        refreshPolicy: BannerRefreshPolicy = BannerRefreshPolicy(), privacy: PrivacySignals = PrivacySignals(),
        clock: any AdClock = SystemAdClock()
    ) {
        self.init(
            size: size, location: location, network: network, delegate: delegate, refreshPolicy: refreshPolicy,
            privacy: privacy, clock: clock, drawsEveryShownAd: false)
    }

    /// For tests and tools without a renderer: with `drawsEveryShownAd`, every ad shown counts as drawn at once.
    package init(
        size: BannerSize, location: String, network: any AdNetwork, delegate: (any ChartboostBannerDelegate)? = nil,
        refreshPolicy: BannerRefreshPolicy = BannerRefreshPolicy(), privacy: PrivacySignals = PrivacySignals(),
        clock: any AdClock = SystemAdClock(), drawsEveryShownAd: Bool
    ) {
        self.drawsEveryShownAd = drawsEveryShownAd
        self.size = size
        self.location = location
        self.network = network
        self.request = AdRequest(placement: location, format: .banner(size), privacy: privacy)
        self.delegate = delegate
        self.refreshPolicy = refreshPolicy
        self.clock = clock
    }

    /// Released: the refresh controller (owned by the banner alone) is released with it, which cancels its timer and
    /// any load, so a banner the app dropped never loads or reports again.
    deinit {
        controllerEvents?.cancel()
        cached?.invalidate()
        shown?.invalidate()
        for ad in retiredWhileClicked { ad.invalidate() }
    }

    /// Stops the banner: auto-refresh ends (no load, impression or timer after this returns) and the ads it holds are
    /// invalidated. ``show()`` starts it again.
    public func stop() async {
        if let controller {
            await controller.stop()
            self.controller = nil
        }
        controllerEvents?.cancel()
        controllerEvents = nil
        cached?.invalidate()
        cached = nil
        shown?.invalidate()
        shown = nil
        clickState = nil
        for ad in retiredWhileClicked { ad.invalidate() }
        retiredWhileClicked = []
    }

    /// Sets the delegate (held weakly).
    public func setDelegate(_ delegate: (any ChartboostBannerDelegate)?) { self.delegate = delegate }

    /// Turns auto-refresh on or off. Turning it off stops a running refresh controller; the ad on screen stays on
    /// screen, valid (a click on it is still reported), until the app shows another. Turning it on takes effect at
    /// the next ``show()``, which goes on from the ad on screen.
    public func setAutomaticallyRefreshesContent(_ value: Bool) async {
        automaticallyRefreshesContent = value
        if !value, let controller {
            self.controller = nil
            controllerEvents?.cancel()
            controllerEvents = nil
            let onScreen = await controller.stopKeepingCurrentAd()
            if let onScreen {
                retire(shown)
                shown = onScreen
                shownDrawn = onScreen.reportedEvents.contains(.impression)
            }
        }
    }

    /// An unexpired ad is cached and ready to show.
    public var isCached: Bool {
        guard let cached else { return false }
        return !cached.isExpired(at: clock.now)
    }

    /// The ad on screen, for the app to render.
    public var displayedAd: LoadedAd? {
        get async {
            if let controller { return await controller.currentAd }
            return shown
        }
    }

    /// The refresh controller while auto-refresh runs (to pause it while hidden, backgrounded or covered).
    public var refreshController: BannerRefreshController? { controller }

    private func event(_ ad: LoadedAd?) -> BannerAdEvent {
        BannerAdEvent(location: location, size: size, adID: ad?.creative.id)
    }

    /// Loads an ad and keeps it for `show()`; `didCacheAd` reports the outcome.
    public func cache() async {
        do {
            switch try await network.load(request) {
            case .filled(let ad):
                cached?.invalidate()
                cached = ad
                delegate?.didCacheAd(event(ad), error: nil)
            case .noFill(let noFill):
                delegate?.didCacheAd(event(nil), error: AdError(.noFill, noFill.reason, reason: .bannerNoFill))
            }
        } catch {
            delegate?.didCacheAd(event(nil), error: .banner(.bannerLoadFailed, error))
        }
    }

    /// Shows the cached ad (`willShowAd`; the impression and `didShowAd` follow the app's ``drawn(adID:)``). With
    /// auto-refresh on, the banner then keeps itself filled (a cached ad is shown first; without one, the first ad is
    /// loaded), each ad's impression again from ``drawn(adID:)``.
    public func show() async {
        if automaticallyRefreshesContent {
            guard controller == nil else { return }
            let controller = BannerRefreshController(
                network: network, request: request, policy: refreshPolicy, clock: clock,
                drawsEveryShownAd: drawsEveryShownAd)
            self.controller = controller
            let updates = controller.updates
            controllerEvents = Task { [weak self] in
                for await update in updates { await self?.controllerUpdate(update) }
            }
            let initial = isCached ? cached : nil
            if initial == nil { cached?.invalidate() }  // expired
            cached = nil
            if initial == nil, let onScreen = shown {
                // Auto-refresh turned back on: the ad on screen stays and is refreshed in turn.
                shown = nil
                await controller.start(continuing: onScreen)
            } else {
                retire(shown)
                shown = nil
                await controller.start(with: initial)
            }
            return
        }
        guard let ad = cached, !ad.isExpired(at: clock.now) else {
            let error =
                cached == nil
                ? AdError(.invalidState, "call cache() first", reason: .bannerNoCachedAd)
                : AdError(.invalidState, "the cached ad expired", reason: .bannerExpired)
            cached?.invalidate()
            cached = nil
            delegate?.willShowAd(event(nil), error: error)
            delegate?.didShowAd(event(nil), error: error)
            return
        }
        cached = nil
        delegate?.willShowAd(event(ad), error: nil)
        retire(shown)
        shown = ad
        shownDrawn = false
        if drawsEveryShownAd { await drawn() }
    }

    /// The app drew the banner's ad (its first frame is visible): its impression is logged now, once, and
    /// `didShowAd` follows ("the ad has been presented and an ad impression logged, or the operation failed"). The
    /// impression of a banner comes from this call only. `adID` names the ad drawn (nil: the ad on screen); a call for
    /// an ad no longer on screen, or repeated, does nothing.
    public func drawn(adID: String? = nil) async {
        if let controller {
            await controller.drawn(adID: adID)
            return
        }
        guard let ad = shown, !shownDrawn, adID == nil || adID == ad.creative.id else { return }
        shownDrawn = true
        do {
            _ = try await ad.deliver(.impression, occurredAt: clock.now)
            delegate?.didShowAd(event(ad), error: nil)
        } catch {
            delegate?.didShowAd(event(ad), error: .banner(.bannerImpressionFailed, error))
        }
    }

    private func controllerUpdate(_ update: BannerRefreshController.Update) {
        switch update.event {
        case .shown(let adID, _):
            // Seed: willShowAd "right before an ad is presented"…
            delegate?.willShowAd(BannerAdEvent(location: location, size: size, adID: adID), error: nil)
        case .impression(let adID):
            // …didShowAd once "the ad has been presented and an ad impression logged, or if the operation failed".
            delegate?.didShowAd(BannerAdEvent(location: location, size: size, adID: adID), error: nil)
        case .impressionFailed(let adID, let message):
            delegate?.didShowAd(
                BannerAdEvent(location: location, size: size, adID: adID),
                error: update.error ?? AdError(.network, message, reason: .bannerImpressionFailed))
        case .loadFailed(let message):
            // The load's own error (no fill, unauthorized, rate limited…), as `cache()` reports it.
            delegate?.didCacheAd(
                self.event(nil), error: update.error ?? AdError(.network, message, reason: .bannerLoadFailed))
        default:
            break
        }
    }

    /// The user clicked the banner. The click belongs to the ad on screen now, whatever shows later. Asks the
    /// delegate's confirmation gate; the click is reported (each tap) for that ad and `didClickAd` sent at once (its
    /// tracking is queued, never waited for), after a confirmation of true, or `didClickAd` carries a
    /// ``AdError/Reason/bannerClickDeclined`` error (false); nothing happens until the gate answers. While the gate
    /// waits the banner does not refresh (seed: "the ad flow will be paused until then"); a click refreshes it
    /// afterwards. A click while another is in progress is ignored.
    public func click() async {
        guard clickState == nil else { return }
        clickSerial &+= 1
        let id = clickSerial
        let ad: LoadedAd
        let holder: BannerRefreshController?
        if let controller {
            clickState = .starting(id: id)
            let onScreen = await controller.beginClick()
            guard case .starting(let started) = clickState, started == id else {
                // Stopped meanwhile: the click is dropped.
                if let onScreen { await controller.endClick(onScreen, outcome: .declined) }
                return
            }
            guard let onScreen else {
                clickState = nil
                return
            }
            ad = onScreen
            holder = controller
        } else {
            guard let shown else { return }
            ad = shown
            holder = nil
        }
        let click = Click(id: id, ad: ad, controller: holder)
        clickState = .pending(click)
        let handler = ClickConfirmationHandler { [weak self] confirmed in
            Task { await self?.answerClick(id: id, confirmed: confirmed) }
        }
        let pause = delegate?.shouldConfirmClick(event(ad), confirmationHandler: handler) ?? false
        if !pause { await answerClick(id: id, confirmed: true) }
    }

    private func answerClick(id: Int, confirmed: Bool) async {
        guard case .pending(let click) = clickState, click.id == id else { return }
        guard confirmed else {
            clickState = nil
            // Seed: "If the click does not result into the opening of a link an error will be provided explaining why."
            delegate?.didClickAd(
                event(click.ad),
                error: AdError(.cancelled, "the click confirmation was declined", reason: .bannerClickDeclined))
            await click.controller?.endClick(click.ad, outcome: .declined)
            releaseRetired()
            return
        }
        clickState = .reporting(click)
        clickedAd = click.ad
        var reported = false
        do {
            // Each tap is a click (spec: "once per click"); the tracking ping is queued, never waited for.
            reported = try await click.ad.deliver(.click, repeating: true) != .alreadyReported
            delegate?.didClickAd(event(click.ad), error: nil)
        } catch {
            delegate?.didClickAd(event(click.ad), error: .banner(.bannerClickFailed, error))
        }
        // Banners refresh once clicked: the refresh held for the click goes ahead now.
        await click.controller?.endClick(click.ad, outcome: .clicked(reported: reported))
        if case .reporting(let current) = clickState, current.id == click.id { clickState = nil }
        releaseRetired()
    }

    /// The ad of the click in progress, if any.
    private var adBeingClicked: LoadedAd? {
        switch clickState {
        case .pending(let click), .reporting(let click): click.ad
        case .starting, nil: nil
        }
    }

    /// `ad` leaves the screen: invalidated, or kept until the click on it is done.
    private func retire(_ ad: LoadedAd?) {
        guard let ad else { return }
        if ad === adBeingClicked { retiredWhileClicked.append(ad) } else { ad.invalidate() }
    }

    private func releaseRetired() {
        let clicking = adBeingClicked
        for ad in retiredWhileClicked where ad !== clicking { ad.invalidate() }
        retiredWhileClicked.removeAll { $0 !== clicking }
    }

    /// The click's destination (browser, store sheet) was closed: `didFinishHandlingClick`.
    public func clickDestinationClosed() {
        // The clicked ad (in auto-refresh mode the banner may show a newer one by now).
        delegate?.didFinishHandlingClick(event(clickedAd ?? shown), error: nil)
        clickedAd = nil
    }

    /// A click is waiting for its confirmation.
    public var isClickPending: Bool {
        if case .pending = clickState { return true }
        return false
    }
}

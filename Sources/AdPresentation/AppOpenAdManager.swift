import AdMediation

/// Loads an app-open ad ahead of time and shows it when the app comes to the foreground, with the seed's rules:
/// one ad at a time, never loading while loading or while an unexpired ad is held, expiry at
/// `min(ad TTL, 4 hours)` from load, completion reported and the next ad loaded after a dismissal or a failure to
/// present, and the best-practice policies (cold starts only from a loading screen, not before the app has been
/// opened N times, a minimum interval between app-open ads).
///
/// Works over any ``AdNetwork`` — a single network or a ``Mediator``. There is no UI: the app renders the ad it is
/// given and reports presentation back (``adDidPresent()``, ``adDidDismiss()``, ``adDidFailToPresent(_:)``,
/// ``adDidClick()``). All time comes from the injected clock, which must be the one the network loads on (an ad's
/// `loadedAt` and `expiresAt` are read on it).
public actor AppOpenAdManager {
    private enum Screen { case background, loadingScreen, foreground, mainContent }

    private let network: any AdNetwork
    private let request: AdRequest
    private let policy: Policy
    private let clock: any AdClock
    private var ad: LoadedAd?
    private var validUntil: AdInstant?
    private var showing: LoadedAd?
    /// The showing ad's events, decided by the core's ledger from what the app reports (``adDidPresent()`` is the
    /// render signal, ``adDidClick()`` a tap, the dismissal the end): nothing is counted from the hand-over itself.
    private var ledger: FullScreenLedger?
    private var loadTask: Task<Void, Never>?
    /// The load cancelled by ``shutdown()``, which every caller of it awaits.
    private var endingLoad: Task<Void, Never>?
    private var screen: Screen = .background
    /// The app reports its own life cycle (``applicationDidEnterBackground()`` or
    /// ``applicationWillEnterForeground()`` was called): only those inputs, or a call from the background, start a
    /// foreground. Until then the app follows the seed's pattern, where every ``showAdIfAvailable()`` call is the app
    /// becoming active.
    private var reportsLifecycle = false
    /// ``applicationDidLaunch()`` was called and the launch's own did-become-active has not come yet.
    private var launchActivationPending = false
    private var opens = 0
    private var lastShownAt: AdInstant?
    /// Failed loads in a row, and the instant before which the manager starts no load of its own.
    private var failedLoads = 0
    private var loadNotBefore: AdInstant?
    private var log: [Event] = []
    private var isShutDown = false
    /// The most events ``history`` keeps (the oldest go first).
    public static let historyLimit = 1000
    private let continuation: AsyncStream<Event>.Continuation

    /// The manager's events, for the app to observe (see also ``history``).
    public nonisolated let events: AsyncStream<Event>

    /// Creates a manager loading `adUnit` from `network`.
    public init(
        network: any AdNetwork, adUnit: String, request: AdRequest? = nil, policy: Policy = Policy(),
        clock: any AdClock = SystemAdClock()
    ) {
        self.network = network
        var request = request ?? AdRequest(placement: adUnit, format: .appOpen)
        request.placement = adUnit
        request.format = .appOpen
        self.request = request
        self.policy = policy
        self.clock = clock
        (events, continuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(Self.historyLimit))
    }

    /// A load is in progress.
    public var isLoadingAd: Bool { loadTask != nil }
    /// An ad is on screen.
    public var isShowingAd: Bool { showing != nil }
    /// An unexpired ad is held and ready to show.
    public var isAdAvailable: Bool {
        guard ad != nil, let validUntil else { return false }
        return clock.now < validUntil
    }
    /// Every event so far.
    public var history: [Event] { log }

    // MARK: App life-cycle inputs

    /// Cold start: the app launched and shows its loading screen. Counts an open and loads ahead.
    public func applicationDidLaunch() {
        opens += 1
        screen = .loadingScreen
        launchActivationPending = true
        startLoad()
    }

    /// The loading screen is gone and the main content is on screen: no app-open ad may show until the next foreground
    /// (for an app that does not report its life cycle, the next ``showAdIfAvailable()`` call after the launch's own).
    public func mainContentDidAppear() {
        if screen != .background { screen = .mainContent }
    }

    /// The app went to the background.
    public func applicationDidEnterBackground() {
        reportsLifecycle = true
        screen = .background
    }

    /// Warm start: the app comes back to the foreground. Counts an open and shows an ad if one is available.
    @discardableResult
    public func applicationWillEnterForeground() async -> ShowResult {
        reportsLifecycle = true
        opens += 1
        screen = .foreground
        launchActivationPending = false
        if isShutDown { return .notShown(.shutDown) }
        if showing != nil { return .notShown(.alreadyShowing) }
        return present()
    }

    // MARK: Load and show

    /// Loads an ad unless one is loading or an unexpired one is held. An expired ad is discarded first. The app's
    /// own call is never held by the back-off after failed loads (``Policy/loadBackoff``).
    public func loadAd() async {
        startLoad(explicit: true)
        await loadTask?.value
    }

    /// Waits for a load in progress, if any.
    public func waitForLoad() async {
        await loadTask?.value
    }

    private func startLoad(explicit: Bool = false) {
        discardIfExpired()
        guard !isShutDown, loadTask == nil, ad == nil else { return }
        if !explicit, let notBefore = loadNotBefore, clock.now < notBefore { return }
        let network = network, request = request
        // Weak: a manager the app released is not kept alive by its own load; the ad it would have held is invalidated.
        loadTask = Task { [weak self] in
            let result: Result<AdLoadResult, any Error>
            do { result = .success(try await network.load(request)) } catch { result = .failure(error) }
            if let self { await self.finishLoad(result) } else { (try? result.get())?.ad?.invalidate() }
        }
    }

    /// Ends the manager, as every component's `shutdown()` does: cancels a load in progress and returns once it has
    /// ended, invalidates the held and the showing ad (neither is shown or reported again), and finishes ``events``.
    /// Afterwards loads and shows do nothing (``NotShownReason/shutDown``). Idempotent; releasing the manager does the
    /// same without the wait.
    public func shutdown() async {
        guard !isShutDown else {
            await endingLoad?.value  // a second caller also returns only once the first one's load has ended
            return
        }
        isShutDown = true
        let load = loadTask
        loadTask = nil
        endingLoad = load
        load?.cancel()
        await load?.value
        ad?.invalidate()
        ad = nil
        validUntil = nil
        showing?.invalidate()
        showing = nil
        continuation.finish()
    }

    deinit {
        loadTask?.cancel()
        ad?.invalidate()
        showing?.invalidate()
        continuation.finish()
    }

    private func finishLoad(_ result: Result<AdLoadResult, any Error>) {
        loadTask = nil
        if isShutDown {
            (try? result.get())?.ad?.invalidate()
            return
        }
        switch result {
        case .success(.filled):
            failedLoads = 0
            loadNotBefore = nil
        case .success(.noFill), .failure:
            failedLoads += 1
            let doublings = min(failedLoads - 1, 20)
            let wait = min(policy.loadBackoff * (1 << doublings), policy.maximumLoadBackoff)
            loadNotBefore = clock.now + max(.zero, wait)
        }
        switch result {
        case .success(.filled(let loaded)):
            // The 4 hours count from the moment the ad was loaded (the seed's `loadTime`), not from when the manager
            // got round to it.
            let now = clock.now
            var until = min(now, loaded.loadedAt) + policy.maximumAge
            if let expiry = loaded.expiresAt { until = min(until, expiry) }
            guard now < until else {
                loaded.invalidate()
                emit(.loadFailed("the ad arrived expired"))
                return
            }
            ad = loaded
            validUntil = until
            emit(.loaded(adID: loaded.creative.id))
        case .success(.noFill(let noFill)):
            emit(.loadFailed("no fill: \(noFill.reason)"))
        case .failure(let error):
            emit(.loadFailed("\(error)"))
        }
    }

    private func discardIfExpired() {
        if let held = ad, !isAdAvailable {
            held.invalidate()
            ad = nil
            validUntil = nil
            emit(.expired(adID: held.creative.id))
        }
    }

    /// Shows the held ad if it is available and the policies allow; otherwise reports completion and, when no ad is
    /// held, starts a load (also when a policy refused). Never presents two ads at once.
    ///
    /// The seed's own pattern calls only this, from `applicationDidBecomeActive`, plus the dismissal callback. So a
    /// call counts as the app becoming active (an open, and a foreground in which an ad may show) when the manager
    /// believes the app is in the background, and also on every call while the app has never reported its life
    /// cycle (``applicationDidEnterBackground()``, ``applicationWillEnterForeground()``) — except the first call after
    /// ``applicationDidLaunch()``, which is the launch's own activation, where the cold-start rules apply. An app
    /// that reports its life cycle gets one foreground per ``applicationWillEnterForeground()`` or per call from the
    /// background: a second call while its main content is on screen shows nothing.
    public func showAdIfAvailable() -> ShowResult {
        if isShutDown { return .notShown(.shutDown) }
        if showing != nil { return .notShown(.alreadyShowing) }
        noteActivation()
        return present()
    }

    /// A ``showAdIfAvailable()`` call: when is it the app becoming active (see there)?
    private func noteActivation() {
        if screen == .background {
            // A call while the manager believes the app is in the background means the app came to the foreground.
            opens += 1
            screen = .foreground
            launchActivationPending = false
        } else if !reportsLifecycle {
            // Seed: "When the application becomes active, call showAdIfAvailable()". Without life-cycle reports the
            // call is the only sign of an activation; the launch's own keeps the screen the app described.
            if launchActivationPending {
                launchActivationPending = false
            } else {
                opens += 1
                screen = .foreground
            }
        }
    }

    private func present() -> ShowResult {
        if let reason = policyBlock() {
            emit(.completed)
            startLoad()  // refused for policy, but an ad is loaded ahead when none is held
            return .notShown(reason)
        }
        discardIfExpired()
        guard let ready = ad else {
            emit(.completed)
            startLoad()
            return .notShown(.notReady)
        }
        ad = nil
        validUntil = nil
        showing = ready
        // App-open tracking counts "click once per click" (the spec): each tap is a click.
        var contract = FullScreenContract.standard
        contract.clicks = .eachTap
        ledger = FullScreenLedger(contract: contract, presentedAt: clock.now)
        lastShownAt = clock.now
        emit(.presenting(adID: ready.creative.id))
        return .present(ready)
    }

    private func policyBlock() -> NotShownReason? {
        if screen == .mainContent || screen == .background { return .mainContentVisible }
        if opens <= policy.opensBeforeFirstAd { return .tooFewOpens }
        if let last = lastShownAt, clock.now - last < policy.minimumInterval { return .tooSoon }
        return nil
    }

    // MARK: Presentation inputs from the app

    /// The ad is on screen (it began to render): reports the impression (once).
    public func adDidPresent() async {
        await apply(.renderBegan)
    }

    /// The user clicked the ad: reports the click (each tap is one), only for an ad whose impression was counted: a
    /// click reported before ``adDidPresent()`` or after the dismissal is not tracked.
    public func adDidClick() async {
        await apply(.tapped)
    }

    /// The ad was dismissed: reports `ad_closed` when its impression was counted (networks that do not track it send
    /// nothing), clears it, reports completion, loads the next.
    public func adDidDismiss() async {
        guard let current = showing, var decided = ledger else { return }
        let outputs = decided.dismiss(at: clock.now)
        ledger = decided
        finishShowing()
        await deliver(outputs, for: current)
        current.invalidate()
    }

    /// The ad could not be presented: nothing more is counted for it; clears it, reports completion, loads the next.
    public func adDidFailToPresent(_ error: any Error) {
        // Its ledger goes with it: no signal reaches it any more, and the ad is invalidated.
        showing?.invalidate()
        finishShowing()
    }

    /// Applies one of the app's reports to the showing ad's ledger and delivers what it decided.
    private func apply(_ signal: RendererSignal) async {
        guard let current = showing, var decided = ledger else { return }
        let outputs = decided.apply(signal, at: clock.now)
        ledger = decided
        await deliver(outputs, for: current)
    }

    private func deliver(_ outputs: [FullScreenLedger.Output], for current: LoadedAd) async {
        for case .event(let event) in outputs {
            let delivery = try? await current.deliver(event, repeating: event == .click)
            guard let delivery, delivery != .alreadyReported else { continue }
            switch event {
            case .impression: emit(.impression(adID: current.creative.id))
            case .click: emit(.click(adID: current.creative.id))
            default: break
            }
        }
    }

    private func finishShowing() {
        guard showing != nil else { return }
        showing = nil
        ledger = nil
        // The content behind the ad is the app's main content now.
        screen = .mainContent
        emit(.completed)
        startLoad()
    }

    private func emit(_ event: Event) {
        if log.count >= Self.historyLimit { log.removeFirst(log.count - Self.historyLimit + 1) }
        log.append(event)
        continuation.yield(event)
    }
}

extension AppOpenAdManager: BackgroundWork {}

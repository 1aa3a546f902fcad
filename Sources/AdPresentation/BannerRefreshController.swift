import AdMediation

/// Keeps a banner slot filled: loads, shows, reports impressions when the app says an ad was drawn
/// (``drawn(adID:)``), and refreshes on a timer with the Chartboost
/// rules (default 30 s, under 10 s off, over 240 s clamped; refresh after a click; paused while hidden,
/// backgrounded or covered, resuming with the remaining time; 240 s back-off after 4 consecutive failures;
/// the next ad preloaded after an impression; a refresh's load never sooner than the policy's minimum load interval
/// after the previous load started; a fill that arrives already expired is discarded with an
/// ``Event/unusableFill(adID:reason:retryAfter:)`` event and the next load backs off exponentially, bounded by the
/// back-off interval). Generic over any ``AdNetwork``, so it refreshes through a
/// ``Mediator`` as well as through one network. All time comes from the injected clock.
public actor BannerRefreshController {
    /// What happened, in order.
    public enum Event: Sendable, Equatable {
        /// A new ad is on screen: the app renders it and calls ``BannerRefreshController/drawn(adID:)`` once drawn.
        case shown(adID: String, network: String)
        /// A load failed or did not fill.
        case loadFailed(String)
        /// The refresh timer was set to fire at this instant.
        case scheduled(AdInstant)
        /// The timer paused (with this much time left) or resumed.
        case paused(remaining: Duration?)
        /// The timer resumed.
        case resumed
        /// A click was reported; a refresh follows.
        case clicked(adID: String)
        /// The impression of the ad drawn was logged with its network.
        case impression(adID: String)
        /// Logging the impression of the ad shown failed.
        case impressionFailed(adID: String, String)
        /// A fill was unusable (`reason`: it arrived already expired) and was discarded unshown; no load starts
        /// before `retryAfter` (the minimum load interval, doubled by each consecutive unusable fill, bounded by the
        /// policy's back-off interval).
        case unusableFill(adID: String, reason: String, retryAfter: Duration)
    }

    /// An event with the error behind it, for the banner's delegate (which passes on the real code: no fill,
    /// unauthorized, rate limited…).
    package struct Update: Sendable {
        package let event: Event
        package let error: AdError?
    }

    /// How a held click ended (see ``beginClick()``).
    package enum ClickOutcome: Sendable {
        /// The confirmation was declined: no click, no refresh.
        case declined
        /// The click went ahead (`reported`: its tracking was sent); the banner refreshes.
        case clicked(reported: Bool)
    }

    private let network: any AdNetwork
    private let request: AdRequest
    private let clock: any AdClock
    private var machine: BannerRefreshMachine
    private var timer: Task<Void, Never>?
    private var loadTask: Task<Void, Never>?
    private var current: LoadedAd?
    /// ``drawn(adID:)`` was called for the ad on screen.
    private var currentDrawn = false
    /// Every ad shown counts as drawn at once (tests and tools without a renderer).
    private let drawsEveryShownAd: Bool
    /// The ads of the clicks in progress (one entry per click): none is invalidated before its click is done.
    private var clickedAds: [LoadedAd] = []
    private var log: [Event] = []
    private let continuation: AsyncStream<Event>.Continuation
    private let updateContinuation: AsyncStream<Update>.Continuation
    /// Bumped by every armed timer and by `stop()`: a tick from an older timer is stale and ignored.
    private var timerGeneration = 0
    /// Bumped by `stop()`: the answer of a load started before it is discarded.
    private var loadGeneration = 0
    /// The most events ``history`` keeps, and the most ``events`` buffers for a reader that is behind (oldest dropped
    /// first in both).
    public static let historyLimit = 1000

    /// The controller's events (see also ``history``).
    public nonisolated let events: AsyncStream<Event>
    /// The same events with their errors, for the ``ChartboostBanner`` that owns the controller.
    package nonisolated let updates: AsyncStream<Update>

    /// Creates a controller for `request` (a banner placement) on `network`.
    public init(
        network: any AdNetwork, request: AdRequest, policy: BannerRefreshPolicy = BannerRefreshPolicy(),
        clock: any AdClock = SystemAdClock()
    ) {
        self.init(network: network, request: request, policy: policy, clock: clock, drawsEveryShownAd: false)
    }

    /// For tests and tools without a renderer: with `drawsEveryShownAd`, every ad shown counts as drawn at once
    /// (``drawn(adID:)`` when it is shown).
    package init(
        network: any AdNetwork, request: AdRequest, policy: BannerRefreshPolicy = BannerRefreshPolicy(),
        clock: any AdClock = SystemAdClock(), drawsEveryShownAd: Bool
    ) {
        self.drawsEveryShownAd = drawsEveryShownAd
        self.network = network
        self.request = request
        self.clock = clock
        self.machine = BannerRefreshMachine(policy: policy)
        (events, continuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(Self.historyLimit))
        (updates, updateContinuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(Self.historyLimit))
    }

    /// Released: nothing more is loaded, reported or scheduled, and ``events`` finishes. The controller's own tasks
    /// hold it weakly, so dropping the last reference to it (or to the ``ChartboostBanner`` that owns it) ends it.
    deinit {
        timer?.cancel()
        loadTask?.cancel()
        current?.invalidate()
        machine.preloaded?.invalidate()
        for ad in clickedAds { ad.invalidate() }
        continuation.finish()
        updateContinuation.finish()
    }

    /// Every event so far.
    public var history: [Event] { log }
    /// The ad on screen.
    public var currentAd: LoadedAd? { current }
    /// When the refresh timer fires next, if it runs.
    public var nextRefresh: AdInstant? { machine.deadline }
    /// Consecutive failed loads.
    public var consecutiveFailures: Int { machine.consecutiveFailures }
    /// A load is in progress.
    public var isLoading: Bool { loadTask != nil }
    /// A preloaded ad waits for the next refresh.
    public var hasPreloadedAd: Bool { machine.preloaded != nil }

    /// Shows `initial` (an ad the app already cached) or loads and shows the first ad, then keeps refreshing.
    public func start(with initial: LoadedAd? = nil) { perform(machine.start(with: initial, at: clock.now)) }

    /// Starts with `ad` already on screen: it stays (its impression comes from ``drawn(adID:)`` if it was not drawn
    /// yet), and is refreshed after a full interval. Does nothing once started.
    package func start(continuing ad: LoadedAd) {
        guard !machine.started else { return }
        current = ad
        currentDrawn = ad.reportedEvents.contains(.impression)
        perform(machine.startContinuing(at: clock.now))
    }

    /// Stops refreshing and invalidates the ads held: no load, impression or timer tick happens after it returns
    /// (a load already in flight is cancelled and its answer discarded). ``start(with:)`` may start it again.
    public func stop() {
        halt()?.invalidate()
    }

    /// Stops refreshing like ``stop()`` but hands over the ad on screen, still valid (auto-refresh turned off: the
    /// banner keeps showing it).
    package func stopKeepingCurrentAd() -> LoadedAd? {
        halt()
    }

    /// Stops everything and invalidates every ad held except the one on screen, which it returns.
    private func halt() -> LoadedAd? {
        timer?.cancel()
        timer = nil
        timerGeneration += 1
        loadGeneration += 1
        loadTask?.cancel()
        loadTask = nil
        let onScreen = current
        current = nil
        machine.preloaded?.invalidate()
        machine = BannerRefreshMachine(policy: machine.policy)
        for ad in clickedAds where ad !== onScreen { ad.invalidate() }
        clickedAds = []
        return onScreen
    }

    /// Pauses the timer for `reason` (hidden, background, covered).
    public func pause(_ reason: BannerPauseReason) {
        let wasPaused = machine.isPaused
        perform(machine.pause(reason, at: clock.now))
        if !wasPaused && machine.isPaused { emit(.paused(remaining: machine.remaining)) }
    }

    /// Lifts `reason`; the timer resumes with the time it had left once no reason holds.
    public func resume(_ reason: BannerPauseReason) {
        let wasPaused = machine.isPaused
        perform(machine.resume(reason, at: clock.now))
        if wasPaused && !machine.isPaused { emit(.resumed) }
    }

    /// The user clicked the ad on screen: the click is reported (each tap is one), for that ad, and the banner
    /// refreshes. No refresh happens while the click is being reported.
    public func adClicked() async {
        guard let ad = beginClick() else { return }
        let delivery = try? await ad.deliver(.click, repeating: true)
        let reported = delivery.map { $0 != .alreadyReported } ?? false
        endClick(ad, outcome: .clicked(reported: reported))
    }

    /// A click on the ad on screen begins: returns that ad (the click belongs to it, whatever shows later) and holds
    /// the refresh until ``endClick(_:outcome:)``. Nil when no ad is on screen.
    package func beginClick() -> LoadedAd? {
        guard let ad = current else { return nil }
        clickedAds.append(ad)
        perform(machine.holdForClick(at: clock.now))
        return ad
    }

    /// The click on `ad` begun with ``beginClick()`` is done: the refresh resumes (a click refreshes the banner), and
    /// `ad` is invalidated if it left the screen meanwhile. Does nothing when the controller was stopped since.
    package func endClick(_ ad: LoadedAd, outcome: ClickOutcome) {
        guard let index = clickedAds.firstIndex(where: { $0 === ad }) else { return }
        clickedAds.remove(at: index)
        var refresh = false
        if case .clicked(let reported) = outcome {
            refresh = true
            if reported { emit(.clicked(adID: ad.creative.id)) }
        }
        perform(machine.releaseClick(refresh: refresh, at: clock.now))
        if ad !== current && !clickedAds.contains(where: { $0 === ad }) { ad.invalidate() }
    }

    /// Waits until no load is in progress.
    public func waitForLoad() async {
        while let task = loadTask { await task.value }
    }

    private func perform(_ actions: [BannerRefreshMachine.Action]) {
        for action in actions {
            switch action {
            case .load:
                let network = network, request = request, generation = loadGeneration
                loadTask = Task { [weak self] in
                    guard !Task.isCancelled, self != nil else { return }  // stopped or released before it began
                    let ad: LoadedAd?
                    var failure: (message: String, error: AdError)?
                    do {
                        switch try await network.load(request) {
                        case .filled(let loaded): ad = loaded
                        case .noFill(let noFill):
                            ad = nil
                            failure = (
                                "no fill: \(noFill.reason)", AdError(.noFill, noFill.reason, reason: .bannerNoFill)
                            )
                        }
                    } catch {
                        ad = nil
                        failure = ("\(error)", .banner(.bannerLoadFailed, error))
                    }
                    guard let self else {
                        ad?.invalidate()
                        return
                    }
                    await self.loaded(ad, failure: failure, generation: generation)
                }
            case .show(let ad):
                // The ad leaving the screen stays valid while a click on it is in progress (the click is its own).
                if let old = current, !clickedAds.contains(where: { $0 === old }) { old.invalidate() }
                current = ad
                currentDrawn = false
                emit(.shown(adID: ad.creative.id, network: ad.networkID))
                if drawsEveryShownAd { drawn(adID: ad.creative.id) }
            case .armTimer(let at):
                timer?.cancel()
                timerGeneration += 1
                emit(.scheduled(at))
                let clock = clock, generation = timerGeneration
                timer = Task { [weak self] in
                    do { try await clock.sleep(until: at) } catch { return }
                    await self?.fire(generation: generation)
                }
            case .cancelTimer:
                timer?.cancel()
                timer = nil
            case .discard(let ad):
                ad.invalidate()
            case .unusableFill(let ad, let wait):
                ad.invalidate()
                emit(.unusableFill(adID: ad.creative.id, reason: "expired on arrival", retryAfter: wait))
            }
        }
    }

    /// The app drew the ad on screen (its first frame is visible): the ad's impression is reported now, once, stamped
    /// with this moment on the controller's clock, and the next ad is preloaded once it is logged. Inline ads count
    /// their impression from this call only: an ad that was picked but never drawn is never billed. `adID` names the
    /// ad the app drew (nil: the ad on screen now); a call for an ad that is no longer on screen (a refresh replaced
    /// it), before any ad was shown, or repeated for the same ad does nothing.
    public func drawn(adID: String? = nil) {
        guard let ad = current, !currentDrawn, adID == nil || adID == ad.creative.id else { return }
        currentDrawn = true
        let generation = loadGeneration, drawnAt = clock.now
        Task { [weak self] in
            // The impression is reported only while the controller lives and has not been stopped since.
            guard let self, await self.isCurrent(ad, generation: generation) else { return }
            do {
                let logged = try await ad.deliver(.impression, occurredAt: drawnAt) != .alreadyReported
                let message = "the ad was invalidated before its impression"
                await self.impressionDone(
                    ad,
                    failure: logged
                        ? nil : (message, AdError(.invalidState, message, reason: .bannerImpressionFailed)))
            } catch {
                await self.impressionDone(ad, failure: ("\(error)", .banner(.bannerImpressionFailed, error)))
            }
        }
    }

    private func isCurrent(_ ad: LoadedAd, generation: Int) -> Bool { current === ad && generation == loadGeneration }

    private func loaded(_ ad: LoadedAd?, failure: (message: String, error: AdError)?, generation: Int) {
        guard generation == loadGeneration else {
            ad?.invalidate()
            return
        }  // stopped since the load began
        loadTask = nil
        if let failure { emit(.loadFailed(failure.message), error: failure.error) }
        perform(machine.loadFinished(ad, at: clock.now))
    }

    private func impressionDone(_ ad: LoadedAd, failure: (message: String, error: AdError)?) {
        guard current === ad else { return }
        if let failure {
            emit(.impressionFailed(adID: ad.creative.id, failure.message), error: failure.error)
        } else {
            emit(.impression(adID: ad.creative.id))
        }
        perform(machine.impressionRecorded(at: clock.now))
    }

    private func fire(generation: Int) {
        guard generation == timerGeneration else { return }  // a stale tick of a cancelled or replaced timer
        timer = nil
        perform(machine.timerFired(at: clock.now))
    }

    private func emit(_ event: Event, error: AdError? = nil) {
        if log.count >= Self.historyLimit { log.removeFirst(log.count - Self.historyLimit + 1) }
        log.append(event)
        continuation.yield(event)
        updateContinuation.yield(Update(event: event, error: error))
    }
}

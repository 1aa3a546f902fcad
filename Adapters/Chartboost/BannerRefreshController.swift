import AdMediation

/// Why a banner's refresh timer is paused. The timer runs only while no reason holds.
public enum BannerPauseReason: String, Sendable, Hashable, CaseIterable {
    /// The banner is not visible on screen.
    case hidden
    /// The app is in the background.
    case background
    /// A full-screen ad covers the banner.
    case coveredByFullScreenAd = "covered"
}

/// Refresh settings. Values follow Chartboost Mediation's banner controller.
public struct BannerRefreshPolicy: Sendable, Hashable {
    /// The configured refresh interval. Under 10 s disables refresh; over 240 s is clamped to 240 s. Default 30 s.
    public var interval: Duration
    /// Consecutive load failures after which retries back off. Default 4.
    public var failuresBeforeBackoff: Int
    /// The retry interval once backing off. Default 240 s.
    public var backoffInterval: Duration
    /// Load the next ad right after an impression, so it is ready when the timer fires. Default true.
    public var preloadAfterImpression: Bool
    /// The shortest time between the start of one load and a refresh's load (timer, click, replacing an expired
    /// ad); at least 1 s whatever is set. It is also the first back-off after a fill that arrives already expired,
    /// doubled by each consecutive one up to ``backoffInterval``. Default 2 s.
    public var minimumLoadInterval: Duration

    /// Creates a policy.
    public init(
        interval: Duration = .seconds(30), failuresBeforeBackoff: Int = 4, backoffInterval: Duration = .seconds(240),
        preloadAfterImpression: Bool = true, minimumLoadInterval: Duration = .seconds(2)
    ) {
        self.interval = interval
        self.failuresBeforeBackoff = failuresBeforeBackoff
        self.backoffInterval = backoffInterval
        self.preloadAfterImpression = preloadAfterImpression
        self.minimumLoadInterval = minimumLoadInterval
    }

    /// The minimum load interval in force: ``minimumLoadInterval``, at least 1 s.
    public var effectiveMinimumLoadInterval: Duration { max(minimumLoadInterval, .seconds(1)) }

    /// The wait before the next load after `count` consecutive fills that arrived already expired (count ≥ 1):
    /// ``effectiveMinimumLoadInterval`` doubled per fill after the first, at most ``backoffInterval`` (but never
    /// under the minimum interval).
    public func unusableFillBackoff(after count: Int) -> Duration {
        let base = effectiveMinimumLoadInterval
        let cap = max(base, backoffInterval)
        var wait = base
        var doublings = max(0, count - 1)
        while doublings > 0 && wait < cap {
            wait = wait > cap / 2 ? cap : wait * 2
            doublings -= 1
        }
        return min(wait, cap)
    }

    /// The interval in force: nil (refresh off) under 10 s, at most 240 s.
    public var effectiveInterval: Duration? {
        if interval < .seconds(10) { return nil }
        return min(interval, .seconds(240))
    }
}

/// The refresh rules as a value type fed with explicit instants.
struct BannerRefreshMachine: Sendable {
    enum Action: Sendable {
        case load
        case show(LoadedAd)
        case armTimer(AdInstant)
        case cancelTimer
        case discard(LoadedAd)
        /// A fill arrived already expired and was discarded; no load starts before `retryAfter` from now.
        case unusableFill(LoadedAd, retryAfter: Duration)
    }

    let policy: BannerRefreshPolicy
    private(set) var pauses: Set<BannerPauseReason> = []
    private(set) var deadline: AdInstant?
    private(set) var remaining: Duration?
    private(set) var consecutiveFailures = 0
    private(set) var loading = false
    private(set) var preloaded: LoadedAd?
    private(set) var started = false
    /// Clicks waiting for their confirmation or being reported: the refresh holds until every one is done (seed: "the
    /// ad flow will be paused until then").
    private(set) var clickHolds = 0
    /// The timer fired (or a click asked for a refresh) while nothing was ready: show the next load at once.
    private var showWhenLoaded = false
    /// When the latest load started.
    private(set) var lastLoadStart: AdInstant?
    /// Consecutive fills that arrived already expired (reset by a usable fill).
    private(set) var consecutiveUnusableFills = 0
    /// No refresh load starts before this instant (the back-off after an unusable fill).
    private var backoffUntil: AdInstant?

    init(policy: BannerRefreshPolicy) { self.policy = policy }

    var isPaused: Bool { !pauses.isEmpty || clickHolds > 0 }

    mutating func start(with initial: LoadedAd? = nil, at now: AdInstant) -> [Action] {
        guard !started else { return [] }
        started = true
        showWhenLoaded = true
        if let initial {
            preloaded = initial
            return isPaused ? [] : showPreloaded(at: now)
        }
        return requestLoad(at: now)
    }

    /// Starts with an ad already on screen (shown and its impression logged): the next refresh comes after a full
    /// interval, and the next ad is preloaded as after an impression.
    mutating func startContinuing(at now: AdInstant) -> [Action] {
        guard !started else { return [] }
        started = true
        showWhenLoaded = false
        guard let interval = policy.effectiveInterval else { return [] }
        return arm(after: interval, at: now) + impressionRecorded(at: now)
    }

    /// Starts a load, unless one runs. `paced` (every load but the preload after an impression, which happens once
    /// per ad shown): a load sooner than the minimum interval after the previous one, or within the back-off of an
    /// unusable fill, is put off — the refresh timer is armed for the earliest allowed instant, and its refresh
    /// loads and shows.
    private mutating func requestLoad(at now: AdInstant, paced: Bool = true) -> [Action] {
        if loading { return [] }
        if paced, let earliest = earliestLoad, now < earliest {
            showWhenLoaded = true
            return arm(after: earliest - now, at: now)
        }
        loading = true
        lastLoadStart = now
        return [.load]
    }

    /// The earliest instant a paced load may start.
    private var earliestLoad: AdInstant? {
        let afterLast = lastLoadStart.map { $0 + policy.effectiveMinimumLoadInterval }
        guard let backoffUntil else { return afterLast }
        guard let afterLast else { return backoffUntil }
        return max(afterLast, backoffUntil)
    }

    mutating func loadFinished(_ ad: LoadedAd?, at now: AdInstant) -> [Action] {
        loading = false
        guard let ad else {
            consecutiveFailures += 1
            // A failed preload leaves the running refresh timer alone: the next refresh tries again.
            guard deadline == nil, remaining == nil, let interval = policy.effectiveInterval else { return [] }
            return arm(
                after: consecutiveFailures >= policy.failuresBeforeBackoff ? policy.backoffInterval : interval, at: now)
        }
        consecutiveFailures = 0
        if ad.isExpired(at: now) {
            // Unusable on arrival: never shown; the next load backs off exponentially (bounded), and the running
            // refresh timer (if any) stays — its refresh is paced by the back-off.
            consecutiveUnusableFills += 1
            let wait = policy.unusableFillBackoff(after: consecutiveUnusableFills)
            backoffUntil = now + wait
            var actions: [Action] = [.unusableFill(ad, retryAfter: wait)]
            if showWhenLoaded, deadline == nil, remaining == nil {
                actions += arm(after: wait, at: now)
            }
            return actions
        }
        consecutiveUnusableFills = 0
        backoffUntil = nil
        var actions: [Action] = []
        if let old = preloaded { actions.append(.discard(old)) }
        preloaded = ad
        if showWhenLoaded && !isPaused {
            actions += showPreloaded(at: now)
        }
        return actions
    }

    private mutating func showPreloaded(at now: AdInstant) -> [Action] {
        guard let ad = preloaded else { return [] }
        preloaded = nil
        if ad.isExpired(at: now) {
            // A preloaded ad past its expiry is never shown: discard it and show the next one when it arrives.
            showWhenLoaded = true
            return [.discard(ad)] + requestLoad(at: now)
        }
        showWhenLoaded = false
        var actions: [Action] = [.show(ad)]
        if let interval = policy.effectiveInterval {
            actions += arm(after: interval, at: now)
        } else {
            deadline = nil
            remaining = nil
            actions.append(.cancelTimer)
        }
        return actions
    }

    /// The impression of the ad just shown was recorded: preload the next one.
    mutating func impressionRecorded(at now: AdInstant) -> [Action] {
        guard policy.preloadAfterImpression, policy.effectiveInterval != nil, preloaded == nil else { return [] }
        return requestLoad(at: now, paced: false)
    }

    mutating func timerFired(at now: AdInstant) -> [Action] {
        guard let deadline, now >= deadline, !isPaused else { return [] }
        self.deadline = nil
        return refresh(at: now)
    }

    /// Refresh now: show a preloaded ad, or load and show when it arrives.
    mutating func refresh(at now: AdInstant) -> [Action] {
        if preloaded != nil && !isPaused { return showPreloaded(at: now) }
        showWhenLoaded = true
        var actions: [Action] = [.cancelTimer]
        deadline = nil
        actions += requestLoad(at: now)
        return actions
    }

    mutating func pause(_ reason: BannerPauseReason, at now: AdInstant) -> [Action] {
        let wasPaused = isPaused
        pauses.insert(reason)
        return wasPaused ? [] : stopTimer(at: now)
    }

    mutating func resume(_ reason: BannerPauseReason, at now: AdInstant) -> [Action] {
        guard pauses.remove(reason) != nil, !isPaused else { return [] }
        return restartTimer(at: now)
    }

    /// A click on the ad on screen waits for its confirmation or its report: nothing refreshes until it is done.
    mutating func holdForClick(at now: AdInstant) -> [Action] {
        let wasPaused = isPaused
        clickHolds += 1
        return wasPaused ? [] : stopTimer(at: now)
    }

    /// A held click is done. `refresh`: it was clicked, and banners refresh once clicked (the timer then restarts
    /// from that refresh); otherwise (declined) the timer resumes with the time it had left.
    mutating func releaseClick(refresh: Bool, at now: AdInstant) -> [Action] {
        guard clickHolds > 0 else { return [] }
        clickHolds -= 1
        guard refresh else { return isPaused ? [] : restartTimer(at: now) }
        remaining = nil
        if !isPaused { return self.refresh(at: now) }
        // Still paused for another reason: the refresh shows when that lifts.
        showWhenLoaded = true
        return preloaded == nil ? requestLoad(at: now) : []
    }

    private mutating func stopTimer(at now: AdInstant) -> [Action] {
        guard let deadline else { return [] }
        remaining = max(.zero, deadline - now)
        self.deadline = nil
        return [.cancelTimer]
    }

    private mutating func restartTimer(at now: AdInstant) -> [Action] {
        if let remaining {
            self.remaining = nil
            return arm(after: remaining, at: now)
        }
        if showWhenLoaded && preloaded != nil { return showPreloaded(at: now) }
        return []
    }

    private mutating func arm(after wait: Duration, at now: AdInstant) -> [Action] {
        if isPaused {
            remaining = wait
            deadline = nil
            return [.cancelTimer]
        }
        deadline = now + wait
        remaining = nil
        return [.armTimer(now + wait)]
    }
}

/// Keeps a banner slot filled: loads, shows, reports impressions, and refreshes on a timer with the Chartboost
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
        /// A new ad is on screen (the app renders it).
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
        /// The impression of the ad shown was logged with its network.
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
    struct Update: Sendable {
        let event: Event
        let error: AdError?
    }

    /// How a held click ended (see ``beginClick()``).
    enum ClickOutcome: Sendable {
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
    nonisolated let updates: AsyncStream<Update>

    /// Creates a controller for `request` (a banner placement) on `network`.
    public init(
        network: any AdNetwork, request: AdRequest, policy: BannerRefreshPolicy = BannerRefreshPolicy(),
        clock: any AdClock = SystemAdClock()
    ) {
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

    /// Starts with `ad` already on screen (shown, its impression logged): it stays, and is refreshed after a full
    /// interval. Does nothing once started.
    func start(continuing ad: LoadedAd) {
        guard !machine.started else { return }
        current = ad
        perform(machine.startContinuing(at: clock.now))
    }

    /// Stops refreshing and invalidates the ads held: no load, impression or timer tick happens after it returns
    /// (a load already in flight is cancelled and its answer discarded). ``start(with:)`` may start it again.
    public func stop() {
        halt()?.invalidate()
    }

    /// Stops refreshing like ``stop()`` but hands over the ad on screen, still valid (auto-refresh turned off: the
    /// banner keeps showing it).
    func stopKeepingCurrentAd() -> LoadedAd? {
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

    /// The user clicked the ad on screen: the click is reported once, for that ad, and the banner refreshes. No
    /// refresh happens while the click request is in flight.
    public func adClicked() async {
        guard let ad = beginClick() else { return }
        let reported = (try? await ad.report(.click)) == true
        endClick(ad, outcome: .clicked(reported: reported))
    }

    /// A click on the ad on screen begins: returns that ad (the click belongs to it, whatever shows later) and holds
    /// the refresh until ``endClick(_:outcome:)``. Nil when no ad is on screen.
    func beginClick() -> LoadedAd? {
        guard let ad = current else { return nil }
        clickedAds.append(ad)
        perform(machine.holdForClick(at: clock.now))
        return ad
    }

    /// The click on `ad` begun with ``beginClick()`` is done: the refresh resumes (a click refreshes the banner), and
    /// `ad` is invalidated if it left the screen meanwhile. Does nothing when the controller was stopped since.
    func endClick(_ ad: LoadedAd, outcome: ClickOutcome) {
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
                emit(.shown(adID: ad.creative.id, network: ad.networkID))
                let generation = loadGeneration
                Task { [weak self] in
                    // The impression is reported only while the controller lives and has not been stopped since.
                    guard let self, await self.isCurrent(ad, generation: generation) else { return }
                    do {
                        let logged = try await ad.report(.impression)
                        let message = "the ad was invalidated before its impression"
                        await self.impressionDone(
                            ad,
                            failure: logged
                                ? nil
                                : (message, AdError(.invalidState, message, reason: .bannerImpressionFailed)))
                    } catch {
                        await self.impressionDone(ad, failure: ("\(error)", .banner(.bannerImpressionFailed, error)))
                    }
                }
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

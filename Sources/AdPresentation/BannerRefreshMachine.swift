import AdMediation

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

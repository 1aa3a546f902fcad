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

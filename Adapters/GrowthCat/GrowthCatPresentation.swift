import AdMediation

/// The presentation rules of a full-screen GrowthCat ad as a value type driven by explicit instants (no UI):
/// the "Sponsored" label is always shown; an image may be closed after `skippable_after_seconds`, or 3 s when it is
/// null; a video per its close policy, or at its end when null; a rewarded ad's close stays hidden until
/// `minimum_view_seconds` (or the video's end), and closing it asks for reward validation. Events come out in order:
/// `impression` on present, `video_start`, `video_progress` at 25/50/75 % (with `progress_pct`), `video_complete`,
/// `click`, `ad_closed`. App Store creatives carry their `overlay` or `product_view` presentation.
public struct GrowthCatPresentation: Sendable {
    /// One event to send, with its metadata.
    public struct Event: Sendable, Hashable {
        /// The event.
        public var name: GrowthCatAdEventName
        /// Metadata (`progress_pct`).
        public var metadata: [String: String]
    }

    /// What closing produced.
    public enum CloseResult: Sendable, Hashable {
        /// The close button is not available yet.
        case notYet(availableAt: AdInstant?)
        /// Closed; validate the reward with these figures before granting anything.
        case closed(validateReward: (viewedSeconds: Double, completed: Bool)?)

        /// Compares the cases.
        public static func == (lhs: CloseResult, rhs: CloseResult) -> Bool {
            switch (lhs, rhs) {
            case (.notYet(let a), .notYet(let b)): a == b
            case (.closed(let a), .closed(let b)): a?.viewedSeconds == b?.viewedSeconds && a?.completed == b?.completed
            default: false
            }
        }
        /// Hashes the case.
        public func hash(into hasher: inout Hasher) {
            switch self {
            case .notYet(let at): hasher.combine(0); hasher.combine(at)
            case .closed(let r): hasher.combine(1); hasher.combine(r?.viewedSeconds); hasher.combine(r?.completed)
            }
        }
    }

    /// The ad shown.
    public let ad: GrowthCatAd
    /// When it was presented.
    public let presentedAt: AdInstant
    /// The "Sponsored" label: always shown.
    public let showsSponsoredLabel = true
    /// `overlay` or `product_view` for App Store creatives.
    public var storePresentation: String? { ad.creativeType == "app_store" ? (ad.storePresentation ?? "overlay") : nil }
    private var quartilesSent: Set<Int> = []
    private var completed = false
    private var closed = false

    /// Presents the ad at `now`; returns the first events (`impression`, and `video_start` for videos).
    public static func present(_ ad: GrowthCatAd, at now: AdInstant) -> (GrowthCatPresentation, [Event]) {
        let session = GrowthCatPresentation(ad: ad, presentedAt: now)
        var events = [Event(name: .impression, metadata: [:])]
        if session.isVideo { events.append(Event(name: .videoStart, metadata: [:])) }
        return (session, events)
    }

    private init(ad: GrowthCatAd, presentedAt: AdInstant) {
        self.ad = ad
        self.presentedAt = presentedAt
    }

    var isVideo: Bool { ad.creativeType == "video" }
    var videoEnd: AdInstant? { isVideo ? ad.durationSeconds.map { presentedAt + Self.seconds($0) } : nil }

    /// Seconds from the ad (already checked by the parser) as a duration; anything unrepresentable is zero.
    static func seconds(_ value: Double) -> Duration { OutsideValue.duration(seconds: value) ?? .zero }

    /// When the close button may appear (nil: only once the video ends, for a video without duration: never).
    public var closeAvailableAt: AdInstant? {
        if ad.isRewarded {
            if let minimum = ad.placement?.minimumViewSeconds ?? ad.rewardGrantAfterSeconds { return presentedAt + Self.seconds(minimum) }
            return videoEnd
        }
        let skipAfter = ad.closeSkippableAfterSeconds ?? ad.placement?.skippableAfterSeconds
        if isVideo {
            if let skipAfter, ad.closeIsSkippable ?? ad.placement?.isSkippable ?? true { return presentedAt + Self.seconds(skipAfter) }
            return videoEnd
        }
        return presentedAt + Self.seconds(skipAfter ?? 3)
    }

    /// Whether the close button is visible at `now`.
    public func isCloseVisible(at now: AdInstant) -> Bool {
        guard let at = closeAvailableAt else { return false }
        return now >= at
    }

    /// Time moved to `now`: the video events due by then.
    public mutating func advance(to now: AdInstant) -> [Event] {
        guard isVideo, let duration = ad.durationSeconds, duration > 0, !closed else { return [] }
        var events: [Event] = []
        for quartile in [25, 50, 75] where !quartilesSent.contains(quartile) {
            if now >= presentedAt + Self.seconds(duration * Double(quartile) / 100) {
                quartilesSent.insert(quartile)
                events.append(Event(name: .videoProgress, metadata: ["progress_pct": String(quartile)]))
            }
        }
        if !completed, let end = videoEnd, now >= end {
            completed = true
            events.append(Event(name: .videoComplete, metadata: [:]))
        }
        return events
    }

    /// The user tapped the call to action.
    public func click() -> [Event] { closed ? [] : [Event(name: .click, metadata: [:])] }

    /// The user asks to close at `now`.
    public mutating func close(at now: AdInstant) -> (CloseResult, [Event]) {
        guard !closed else { return (.closed(validateReward: nil), []) }
        guard isCloseVisible(at: now) else { return (.notYet(availableAt: closeAvailableAt), []) }
        var events = advance(to: now)
        closed = true
        events.append(Event(name: .adClosed, metadata: [:]))
        let viewed = (now - presentedAt).seconds
        let reward: (Double, Bool)? = ad.isRewarded ? (viewed, !isVideo || completed) : nil
        return (.closed(validateReward: reward), events)
    }
}

import AdMediation

/// The presentation rules of a full-screen GrowthCat ad as a value type driven by explicit instants (no UI):
/// the "Sponsored" label is always shown; an image may be closed after `skippable_after_seconds`, or 3 s when it is
/// null; a video per its close policy, or at its end when null (the end comes from the renderer through
/// ``playbackEnded(at:)`` or from `duration_seconds`); a rewarded ad's close stays hidden until `minimum_view_seconds`
/// or the video's end, whichever comes first (a rewarded image with no minimum: ``rewardedImageDefaultMinimum``), and
/// its reward is due for validation at that instant (``rewardValidation(at:)``). No ad keeps its close button hidden
/// longer than ``maximumCloseDelay``. Events come out in order:
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
            case .notYet(let at):
                hasher.combine(0)
                hasher.combine(at)
            case .closed(let r):
                hasher.combine(1)
                hasher.combine(r?.viewedSeconds)
                hasher.combine(r?.completed)
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
    /// A rewarded image whose minimum view time and grant time are both null is closable (and its reward due) after
    /// this long: the spec's example minimum.
    public static let rewardedImageDefaultMinimum: Duration = .seconds(15)
    /// However the metadata and the renderer behave, the close button appears at the latest this long after the ad
    /// was presented: a broken video (no duration, never reporting its end) never traps the user.
    public static let maximumCloseDelay: Duration = .seconds(300)
    private var quartilesSent: Set<Int> = []
    private var completed = false
    private var closed = false
    /// When the renderer reported the end of playback (or its failure).
    private var playbackEndedAt: AdInstant?
    private var rewardHandedOut = false

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

    /// When the video ends: reported by the renderer, else from `duration_seconds`; nil while unknown.
    var videoEnd: AdInstant? {
        guard isVideo else { return nil }
        if let playbackEndedAt { return playbackEndedAt }
        return ad.durationSeconds.map { presentedAt + Self.seconds($0) }
    }

    /// Seconds from the ad (already checked by the parser) as a duration; anything unrepresentable is zero.
    static func seconds(_ value: Double) -> Duration { OutsideValue.duration(seconds: value) ?? .zero }

    /// When a rewarded ad's reward condition is met: its minimum view time (`minimum_view_seconds`, else
    /// `reward_grant_after_seconds`) or the video's end, whichever comes first ("hidden until minimum_view_seconds
    /// elapses (or the video finishes)"); a rewarded image with neither waits ``rewardedImageDefaultMinimum``.
    var rewardDueAt: AdInstant? {
        guard ad.isRewarded else { return nil }
        let minimum = (ad.placement?.minimumViewSeconds ?? ad.rewardGrantAfterSeconds).map {
            presentedAt + Self.seconds($0)
        }
        if isVideo {
            switch (minimum, videoEnd) {
            case (let m?, let e?): return min(m, e)
            case (let m?, nil): return m
            case (nil, let e?): return e
            case (nil, nil): return nil
            }
        }
        return minimum ?? presentedAt + Self.rewardedImageDefaultMinimum
    }

    /// When the close button may appear; never later than ``maximumCloseDelay`` after presenting.
    public var closeAvailableAt: AdInstant? {
        let latest = presentedAt + Self.maximumCloseDelay
        return min(rulesCloseAt ?? latest, latest)
    }

    private var rulesCloseAt: AdInstant? {
        if ad.isRewarded { return rewardDueAt }
        let skipAfter = ad.closeSkippableAfterSeconds ?? ad.placement?.skippableAfterSeconds
        if isVideo {
            if let skipAfter, ad.closeIsSkippable ?? ad.placement?.isSkippable ?? true {
                let skip = presentedAt + Self.seconds(skipAfter)
                return videoEnd.map { min($0, skip) } ?? skip
            }
            return videoEnd
        }
        return presentedAt + Self.seconds(skipAfter ?? 3)
    }

    /// Whether the close button is visible at `now`.
    public func isCloseVisible(at now: AdInstant) -> Bool {
        guard let at = closeAvailableAt else { return false }
        return now >= at
    }

    /// Time moved to `now`: the video events due by then, from `duration_seconds` (a renderer that reports
    /// progress uses ``playbackProgressed(to:at:)`` instead, which also works without a duration).
    public mutating func advance(to now: AdInstant) -> [Event] {
        guard isVideo, !closed else { return [] }
        var events: [Event] = []
        if playbackEndedAt == nil, let duration = ad.durationSeconds, duration > 0 {
            for quartile in [25, 50, 75] where !quartilesSent.contains(quartile) {
                if now >= presentedAt + Self.seconds(duration * Double(quartile) / 100) {
                    quartilesSent.insert(quartile)
                    events.append(Event(name: .videoProgress, metadata: ["progress_pct": String(quartile)]))
                }
            }
        }
        if !completed, let end = videoEnd, now >= end {
            events += remainingQuartiles()
            completed = true
            events.append(Event(name: .videoComplete, metadata: [:]))
        }
        return events
    }

    /// The renderer's playback position, as a fraction 0…1 of the video: the quartile events it crossed.
    public mutating func playbackProgressed(to fraction: Double, at now: AdInstant) -> [Event] {
        guard isVideo, !closed, fraction.isFinite else { return [] }
        var events: [Event] = []
        for quartile in [25, 50, 75] where !quartilesSent.contains(quartile) && fraction * 100 >= Double(quartile) {
            quartilesSent.insert(quartile)
            events.append(Event(name: .videoProgress, metadata: ["progress_pct": String(quartile)]))
        }
        return events + (fraction >= 1 ? playbackEnded(at: now) : [])
    }

    /// The renderer says playback ended (or failed and cannot continue) at `now`: the remaining quartiles and
    /// `video_complete` are due, and the close button may appear (a rewarded video's reward condition is met).
    public mutating func playbackEnded(at now: AdInstant) -> [Event] {
        guard isVideo, !closed else { return [] }
        if playbackEndedAt == nil { playbackEndedAt = now }
        return advance(to: now)
    }

    private mutating func remainingQuartiles() -> [Event] {
        var events: [Event] = []
        for quartile in [25, 50, 75] where !quartilesSent.contains(quartile) {
            quartilesSent.insert(quartile)
            events.append(Event(name: .videoProgress, metadata: ["progress_pct": String(quartile)]))
        }
        return events
    }

    /// The seed: "Once the user has watched for minimum_view_seconds … the SDK calls POST /v1/ads/reward/validate
    /// with the actual elapsed seconds." Returns the figures to validate with, once, the first time it is asked at or
    /// after the reward condition is met; nil before, after, once closed or dismissed, and for ads that are not
    /// rewarded.
    public mutating func rewardValidation(at now: AdInstant) -> (viewedSeconds: Double, completed: Bool)? {
        guard ad.isRewarded, !closed, !rewardHandedOut, let due = rewardDueAt, now >= due else { return nil }
        rewardHandedOut = true
        let finished = completed || (videoEnd.map { now >= $0 } ?? false)
        return ((now - presentedAt).seconds, !isVideo || finished)
    }

    /// Whether the ad was closed (or dismissed).
    public var isClosed: Bool { closed }

    /// The next instant after `now` at which something is due: a quartile, the video's end, the close button or the
    /// reward; nil when nothing more is timed.
    public func nextChange(after now: AdInstant) -> AdInstant? {
        guard !closed else { return nil }
        var due: [AdInstant?] = [closeAvailableAt, rewardHandedOut ? nil : rewardDueAt]
        if isVideo {
            due.append(completed ? nil : videoEnd)
            if playbackEndedAt == nil, let duration = ad.durationSeconds, duration > 0 {
                for quartile in [25, 50, 75] where !quartilesSent.contains(quartile) {
                    due.append(presentedAt + Self.seconds(duration * Double(quartile) / 100))
                }
            }
        }
        return due.compactMap { $0 }.filter { $0 > now }.min()
    }

    /// The ad left the screen at `now` without the close button (the app or the system removed it): the events due by
    /// then and `ad_closed`. No reward is handed out for it.
    public mutating func dismiss(at now: AdInstant) -> [Event] {
        guard !closed else { return [] }
        var events = advance(to: now)
        closed = true
        events.append(Event(name: .adClosed, metadata: [:]))
        return events
    }

    /// The user tapped the call to action.
    public func click() -> [Event] { closed ? [] : [Event(name: .click, metadata: [:])] }

    /// The user asks to close at `now`.
    public mutating func close(at now: AdInstant) -> (CloseResult, [Event]) {
        guard !closed else { return (.closed(validateReward: nil), []) }
        guard isCloseVisible(at: now) else { return (.notYet(availableAt: closeAvailableAt), []) }
        var events = advance(to: now)
        // A rewarded ad whose validation was not handed out yet (closed at its first possible instant) hands it out
        // now.
        let reward = rewardValidation(at: now)
        closed = true
        events.append(Event(name: .adClosed, metadata: [:]))
        return (.closed(validateReward: reward), events)
    }
}

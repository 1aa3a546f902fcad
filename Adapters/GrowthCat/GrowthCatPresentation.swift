import AdMediation
import AdTransport

/// The presentation rules of a full-screen GrowthCat ad, from the seed, as a ``FullScreenContract``
/// (``contract(for:)``) that the core's ``FullScreenLedger`` applies to the renderer's signals; no event is timed here.
/// The "Sponsored" label is always shown. An image: `impression` when it renders ("impression fires immediately on
/// presentation"), the close button after `skippable_after_seconds` on screen, or 3 s when it is null. A video:
/// `impression` and `video_start` "when playback begins", `video_progress` at 25/50/75 % of the *played* video,
/// `video_complete` at its real end; the close button after `skippable_after_seconds` of playback, or only at the end
/// when null ("cannot close until video finishes"), or when the renderer reports a failure. A rewarded ad's close
/// stays hidden until `minimum_view_seconds` (on screen for an image, played for a video) "or the video finishes" ("the
/// user cannot skip early"), and its reward is due for validation then, `completed: true` only after a real end. A
/// rewarded image with no minimum: ``rewardedImageDefaultMinimum``. `click` once per tap; `ad_closed` on close or
/// dismissal. App Store creatives carry their `overlay` or `product_view` presentation.
///
/// Apps present a GrowthCat ad with `LoadedAd.presentFullScreen`, the one full-screen driver, which applies
/// ``contract(for:)`` through the core's ledger and sends every event through the ad's own reporter. The value type
/// below is not a presentation path (it sends nothing): it is the same rules driven by explicit instants, kept
/// package-internal for the rules' tests and the fuzzer. Its mapping: ``present(_:at:)`` is the renderer's
/// `renderBegan` (and, for a video, `playbackStarted`) at that instant; ``advance(to:)`` moves the clock only;
/// ``playbackProgressed(to:at:)`` is the played fraction; ``playbackEnded(at:)`` is a real end;
/// ``playbackFailed(_:at:)`` a failure; ``click()`` a tap; ``close(at:)`` a close tap; ``dismiss(at:)`` the ad leaving
/// the screen.
package struct GrowthCatPresentation: Sendable {
    /// One event to send, with its metadata.
    package struct Event: Sendable, Hashable {
        /// The event.
        package var name: GrowthCatAdEventName
        /// Metadata (`progress_pct`).
        package var metadata: [String: String]
    }

    /// What closing produced.
    package enum CloseResult: Sendable, Hashable {
        /// The close button is not available yet.
        case notYet(availableAt: AdInstant?)
        /// Closed; validate the reward with these figures before granting anything.
        case closed(validateReward: (viewedSeconds: Double, completed: Bool)?)

        /// Compares the cases.
        package static func == (lhs: CloseResult, rhs: CloseResult) -> Bool {
            switch (lhs, rhs) {
            case (.notYet(let a), .notYet(let b)): a == b
            case (.closed(let a), .closed(let b)): a?.viewedSeconds == b?.viewedSeconds && a?.completed == b?.completed
            default: false
            }
        }
        /// Hashes the case.
        package func hash(into hasher: inout Hasher) {
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
    package let ad: GrowthCatAd
    /// When it was presented (and, through this type, rendered).
    package let presentedAt: AdInstant
    /// The "Sponsored" label: always shown.
    package let showsSponsoredLabel = true
    /// `overlay` or `product_view` for App Store creatives.
    package var storePresentation: String? {
        ad.creativeType == "app_store" ? (ad.storePresentation ?? "overlay") : nil
    }
    /// A rewarded image whose minimum view time and grant time are both null is closable (and its reward due) after
    /// this long: the spec's example minimum.
    package static let rewardedImageDefaultMinimum: Duration = .seconds(15)
    /// The longest an image's close button waits on a metadata value: a longer `skippable_after_seconds` or minimum
    /// view time (a garbled or hostile value: 7 days is the longest readable) is read as this. It never shortens a
    /// video's wait, which ends at the video's real end or its failure: that is what the renderer's failure signal is
    /// for. (It was a 300 s cap on every ad, which let a 600 s video be closed early.)
    package static let maximumCloseDelay: Duration = .seconds(3600)
    /// The core's record of this presentation.
    package private(set) var ledger: FullScreenLedger
    private var now: AdInstant
    private var pendingClaim: RewardClaim?

    /// The seed's rules for `ad`, for the core's ``FullScreenLedger``.
    package static func contract(for ad: GrowthCatAd) -> FullScreenContract {
        let isVideo = ad.creativeType == "video"
        let creative: FullScreenContract.Creative =
            isVideo ? .video(duration: ad.durationSeconds.map(seconds).flatMap { $0 > .zero ? $0 : nil }) : .image
        var contract = FullScreenContract(
            creative: creative, impression: isVideo ? .playbackStarted : .renderBegan, clicks: .eachTap)
        if ad.isRewarded {
            let minimum = (ad.placement?.minimumViewSeconds ?? ad.rewardGrantAfterSeconds).map(seconds)
            contract.reward = .init(
                minimumView: isVideo ? minimum : min(minimum ?? rewardedImageDefaultMinimum, maximumCloseDelay))
            return contract
        }
        let skipAfter = (ad.closeSkippableAfterSeconds ?? ad.placement?.skippableAfterSeconds).map(seconds)
        if isVideo {
            if let skipAfter, ad.closeIsSkippable ?? ad.placement?.isSkippable ?? true {
                contract.close = .afterPlayed(skipAfter)
            } else {
                contract.close = .atEnd
            }
        } else {
            contract.close = .afterShown(min(skipAfter ?? .seconds(3), maximumCloseDelay))
        }
        return contract
    }

    /// An ad handed to the renderer at `now`: nothing is earned until ``apply(_:at:)`` brings its signals.
    package static func presented(_ ad: GrowthCatAd, at now: AdInstant) -> GrowthCatPresentation {
        GrowthCatPresentation(ad: ad, presentedAt: now)
    }

    /// Presents the ad at `now`, which the renderer began to render at once (and, for a video, began to play): the
    /// first events (`impression`, and `video_start` for videos).
    package static func present(_ ad: GrowthCatAd, at now: AdInstant) -> (GrowthCatPresentation, [Event]) {
        var session = GrowthCatPresentation(ad: ad, presentedAt: now)
        var events = session.apply(.renderBegan, at: now)
        if session.isVideo { events += session.apply(.playbackStarted, at: now) }
        return (session, events)
    }

    private init(ad: GrowthCatAd, presentedAt: AdInstant) {
        self.ad = ad
        self.presentedAt = presentedAt
        self.now = presentedAt
        self.ledger = FullScreenLedger(contract: Self.contract(for: ad), presentedAt: presentedAt)
    }

    var isVideo: Bool { ad.creativeType == "video" }

    /// Seconds from the ad (already checked by the parser) as a duration; anything unrepresentable is zero.
    static func seconds(_ value: Double) -> Duration { OutsideValue.duration(seconds: value) ?? .zero }

    /// Applies a renderer signal at `now`: the events it earned (a reward that fell due waits for
    /// ``rewardValidation(at:)``; a close tap's answer is ``close(at:)``).
    package mutating func apply(_ signal: RendererSignal, at now: AdInstant) -> [Event] {
        take(ledger.apply(signal, at: step(now)))
    }

    /// When the close button is expected (``FullScreenLedger/closeExpectedAt(now:)`` as of the last call).
    package var closeAvailableAt: AdInstant? { ledger.closeExpectedAt(now: now) }

    /// Whether the close button is visible at `now`.
    package func isCloseVisible(at now: AdInstant) -> Bool { ledger.isCloseAvailable(at: now) }

    /// Time moved to `now`: nothing is timed from the clock for a video any more (its events come from playback);
    /// returns what the ledger made due.
    package mutating func advance(to now: AdInstant) -> [Event] { take(ledger.advance(to: step(now))) }

    /// The renderer's playback position, as a fraction 0…1 of the video: the quartile events it crossed (1: the end).
    package mutating func playbackProgressed(to fraction: Double, at now: AdInstant) -> [Event] {
        guard fraction.isFinite, fraction >= 0 else { return [] }
        let length = ledger.videoLength ?? .seconds(1000)
        let position = OutsideValue.duration(seconds: min(fraction, 1) * length.seconds) ?? .zero
        var events = apply(.playbackProgressed(to: position, of: length), at: now)
        if fraction >= 1 { events += apply(.playbackEnded, at: now) }
        return events
    }

    /// The renderer says playback reached its real end at `now`: the quartiles not crossed yet and `video_complete`;
    /// the close button may appear (a rewarded video's reward condition is met).
    package mutating func playbackEnded(at now: AdInstant) -> [Event] { apply(.playbackEnded, at: now) }

    /// The renderer says the video cannot play on: no more events, the close button available, no completed view.
    package mutating func playbackFailed(_ reason: String, at now: AdInstant) -> [Event] {
        apply(.playbackFailed(reason: reason), at: now)
    }

    /// The seed: "Once the user has watched for minimum_view_seconds … the SDK calls POST /v1/ads/reward/validate
    /// with the actual elapsed seconds." Returns the figures to validate with, once, the first time it is asked at or
    /// after the reward condition is met; nil before, after, once closed or dismissed, and for ads that are not
    /// rewarded.
    package mutating func rewardValidation(at now: AdInstant) -> (viewedSeconds: Double, completed: Bool)? {
        if !ledger.isClosed {
            // Events due by then stay for the next call that returns events.
            pendingEvents += take(ledger.advance(to: step(now)))
        }
        defer { pendingClaim = nil }
        return pendingClaim.map { ($0.viewed.seconds, $0.completed) }
    }

    private var pendingEvents: [Event] = []

    /// Whether the ad was closed (or dismissed).
    package var isClosed: Bool { ledger.isClosed }

    /// The next instant after `now` at which the clock alone changes something; nil when nothing is timed.
    package func nextChange(after now: AdInstant) -> AdInstant? { ledger.nextChange(after: now) }

    /// The ad left the screen at `now` without the close button (the app or the system removed it): `ad_closed`.
    /// No reward is handed out for it.
    package mutating func dismiss(at now: AdInstant) -> [Event] {
        let events = take(ledger.dismiss(at: step(now)))
        pendingClaim = nil
        return events
    }

    /// The user tapped the call to action: a `click` per tap, once the impression was counted.
    package func click() -> [Event] {
        ledger.isClosed || ledger.failure != nil || !ledger.emitted.contains(.impression)
            ? [] : [Event(name: .click, metadata: [:])]
    }

    /// The user asks to close at `now`.
    package mutating func close(at now: AdInstant) -> (CloseResult, [Event]) {
        guard !ledger.isClosed else { return (.closed(validateReward: nil), []) }
        let outputs = ledger.apply(.closeTapped, at: step(now))
        var refusedUntil: AdInstant??
        for case .closeRefused(let at) in outputs { refusedUntil = .some(at) }
        let events = take(outputs)
        if let refusedUntil { return (.notYet(availableAt: refusedUntil), events) }
        defer { pendingClaim = nil }
        return (.closed(validateReward: pendingClaim.map { ($0.viewed.seconds, $0.completed) }), events)
    }

    private mutating func step(_ instant: AdInstant) -> AdInstant {
        if instant > now { now = instant }
        return instant
    }

    /// The events among the ledger's outputs (with any held back), keeping a reward that fell due.
    private mutating func take(_ outputs: [FullScreenLedger.Output]) -> [Event] {
        var events = pendingEvents
        pendingEvents = []
        for output in outputs {
            switch output {
            case .event(let event): events.append(Event(event))
            case .rewardDue(let claim): pendingClaim = claim
            case .closeRefused, .closed, .dismissed: break
            }
        }
        return events
    }
}

extension GrowthCatPresentation.Event {
    /// GrowthCat's event for the core's (`video_progress` carries its `progress_pct`).
    init(_ event: AdEvent) {
        switch event {
        case .impression: self.init(name: .impression, metadata: [:])
        case .click: self.init(name: .click, metadata: [:])
        case .videoStart: self.init(name: .videoStart, metadata: [:])
        case .videoProgress(let percent): self.init(name: .videoProgress, metadata: ["progress_pct": String(percent)])
        case .videoComplete: self.init(name: .videoComplete, metadata: [:])
        case .closed: self.init(name: .adClosed, metadata: [:])
        case .reported(let reason): self.init(name: .adReported, metadata: ["reason": reason])
        }
    }
}

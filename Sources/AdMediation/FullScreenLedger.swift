/// The one record of what a full-screen ad has earned: a value-type state machine fed only by the renderer's signals
/// (``RendererSignal``) and the clock, under the network's ``FullScreenContract``. It decides every tracked or billed
/// event and emits each at most once (a `click` once per tap where the contract says so):
///
/// - `impression` at ``RendererSignal/renderBegan`` (or ``RendererSignal/playbackStarted``, per the contract);
/// - `video_start` at ``RendererSignal/playbackStarted``; `video_progress` 25/50/75 % when the *played* position
///   crosses them; `video_complete` only at a real ``RendererSignal/playbackEnded`` (the quartiles not crossed yet
///   come first: the whole video was played);
/// - `click` for a tap once the impression was counted; `ad_closed` last, when an ad whose impression was counted is
///   closed or dismissed;
/// - the close button from the rendered time (images) or the played position and the real end (videos);
/// - a rewarded ad's claim once, when its condition is met, `completed: true` only after a real end (an image's is
///   always complete).
///
/// After ``RendererSignal/playbackFailed(reason:)`` nothing more is earned (no progress, clicks or reward; never
/// `completed: true`), and the close button is available. After the close nothing at all.
package struct FullScreenLedger: Sendable {
    /// What the ledger decided.
    package enum Output: Hashable, Sendable {
        /// Report this event (each once; a `click` once per tap where the contract says so).
        case event(AdEvent)
        /// The reward's condition is met: validate this claim (at most once per ad).
        case rewardDue(RewardClaim)
        /// The user tapped close too early; the button is expected at this instant (nil: not known yet).
        case closeRefused(availableAt: AdInstant?)
        /// The ad was closed with the close button.
        case closed
        /// The ad left the screen without the close button.
        case dismissed
    }

    /// The network's rules.
    package let contract: FullScreenContract
    /// When the ad was handed to the presenter (nothing is timed from it).
    package let presentedAt: AdInstant
    /// When it began to render; nil until then.
    package private(set) var renderedAt: AdInstant?
    /// When the video's playback started; nil until then.
    package private(set) var playbackStartedAt: AdInstant?
    /// The furthest position played.
    package private(set) var played: Duration = .zero
    /// When the video really ended; nil until then.
    package private(set) var endedAt: AdInstant?
    /// Why the creative failed; nil unless it did.
    package private(set) var failure: String?
    /// Whether playback is stalled (buffering).
    package private(set) var isStalled = false
    /// Whether the ad was closed or dismissed.
    package private(set) var isClosed = false
    /// How many clicks were emitted.
    package private(set) var clicks = 0
    /// Whether the reward's claim was emitted.
    package private(set) var rewardClaimed = false
    private var sent: Set<AdEvent> = []
    private var mediaLength: Duration?

    /// A ledger for an ad handed to the presenter at `presentedAt`: nothing is earned until the renderer says so.
    package init(contract: FullScreenContract, presentedAt: AdInstant) {
        self.contract = contract
        self.presentedAt = presentedAt
        if case .video(let duration?) = contract.creative, duration > .zero { mediaLength = duration }
    }

    /// The events emitted so far (clicks once, however many).
    package var emitted: Set<AdEvent> { sent }

    /// The media's length: the renderer's when it said, else the network's; nil when neither.
    package var videoLength: Duration? { mediaLength }

    /// Time moved to `now`: what falls due by the clock alone (an image's reward).
    package mutating func advance(to now: AdInstant) -> [Output] {
        guard !isClosed else { return [] }
        return claimIfDue(at: now)
    }

    /// Applies one renderer signal at `now` (first what the clock made due by then).
    package mutating func apply(_ signal: RendererSignal, at now: AdInstant) -> [Output] {
        guard !isClosed else { return [] }
        var out = claimIfDue(at: now)
        switch signal {
        case .renderBegan:
            guard renderedAt == nil, failure == nil else { break }
            renderedAt = now
            if !contract.isVideo || contract.impression == .renderBegan { out += emit(.impression) }
        case .playbackStarted:
            guard contract.isVideo, failure == nil, playbackStartedAt == nil else { break }
            if renderedAt == nil { renderedAt = now }
            playbackStartedAt = now
            out += emit(.impression) + emit(.videoStart)
        case .playbackProgressed(let position, let length):
            guard isPlaying else { break }
            if let length, length > .zero { mediaLength = length }
            if position > played { played = position }
            out += quartiles(upTo: fractionPlayed)
        case .playbackStalled:
            if isPlaying { isStalled = true }
        case .playbackResumed:
            isStalled = false
        case .playbackFailed(let reason):
            guard failure == nil, endedAt == nil else { break }
            failure = reason
            isStalled = false
        case .playbackEnded:
            guard isPlaying else { break }
            endedAt = now
            isStalled = false
            if let mediaLength, mediaLength > played { played = mediaLength }
            out += quartiles(upTo: 1) + emit(.videoComplete)
        case .tapped:
            guard failure == nil, sent.contains(.impression) else { break }
            switch contract.clicks {
            case .oncePerAd:
                let first = emit(.click)
                if !first.isEmpty { clicks += 1 }
                out += first
            case .eachTap:
                sent.insert(.click)
                clicks += 1
                out.append(.event(.click))
            }
        case .closeTapped:
            if isCloseAvailable(at: now) {
                out += claimAtClose(at: now) + finalEvents() + [.closed]
            } else {
                out.append(.closeRefused(availableAt: closeExpectedAt(now: now)))
            }
        }
        return out + claimIfDue(at: now)
    }

    /// The ad left the screen at `now` without the close button: what was due by then and `ad_closed`.
    package mutating func dismiss(at now: AdInstant) -> [Output] {
        guard !isClosed else { return [] }
        return claimIfDue(at: now) + finalEvents() + [.dismissed]
    }

    /// Whether the close button is available at `now`.
    package func isCloseAvailable(at now: AdInstant) -> Bool {
        guard !isClosed else { return false }
        if failure != nil { return true }
        guard let renderedAt else { return false }
        if contract.reward != nil { return rewardConditionMet(at: now) }
        switch contract.close {
        case .immediately:
            return true
        case .afterShown(let wait):
            return now >= renderedAt + wait
        case .afterPlayed(let wait):
            guard contract.isVideo else { return now >= renderedAt + wait }
            return endedAt != nil || (playbackStartedAt != nil && played >= wait)
        case .atEnd:
            return !contract.isVideo || endedAt != nil
        }
    }

    /// When the close button is expected, for a countdown: the instant itself when the clock decides it; for a video,
    /// `now` plus what remains to play if playback goes on without a stall; nil when not known (not rendered yet, or a
    /// video of unknown length).
    package func closeExpectedAt(now: AdInstant) -> AdInstant? {
        guard !isClosed else { return nil }
        if failure != nil { return now }
        guard let renderedAt else { return nil }
        if let reward = contract.reward {
            guard contract.isVideo else { return renderedAt + (reward.minimumView ?? .zero) }
            return whenPlayed(reward.minimumView, now: now)
        }
        switch contract.close {
        case .immediately: return renderedAt
        case .afterShown(let wait): return renderedAt + wait
        case .afterPlayed(let wait): return contract.isVideo ? whenPlayed(wait, now: now) : renderedAt + wait
        case .atEnd: return contract.isVideo ? whenPlayed(nil, now: now) : renderedAt
        }
    }

    /// The next instant after `now` at which the clock alone changes something (an image's close button or reward).
    package func nextChange(after now: AdInstant) -> AdInstant? {
        guard !isClosed, failure == nil, let renderedAt else { return nil }
        var due: [AdInstant] = []
        if !contract.isVideo {
            if let reward = contract.reward {
                if !rewardClaimed { due.append(renderedAt + (reward.minimumView ?? .zero)) }
            } else {
                switch contract.close {
                case .afterShown(let wait), .afterPlayed(let wait): due.append(renderedAt + wait)
                case .immediately, .atEnd: break
                }
            }
        } else if case .afterShown(let wait) = contract.close, contract.reward == nil {
            due.append(renderedAt + wait)
        } else if let reward = contract.reward, !rewardClaimed, rewardConditionMet(at: now) {
            // A video whose reward condition holds (it ended early) is claimed when the time on the ad reaches the
            // minimum.
            due.append(renderedAt + (reward.minimumView ?? .zero))
        }
        return due.filter { $0 > now }.min()
    }

    private var isPlaying: Bool {
        contract.isVideo && failure == nil && endedAt == nil && playbackStartedAt != nil
    }

    private var fractionPlayed: Double {
        guard let mediaLength, mediaLength > .zero else { return 0 }
        let fraction = played.seconds / mediaLength.seconds
        return fraction.isFinite ? fraction : 0
    }

    private func whenPlayed(_ target: Duration?, now: AdInstant) -> AdInstant? {
        if let endedAt { return endedAt }
        guard playbackStartedAt != nil else { return nil }
        let goal: Duration
        switch (target, mediaLength) {
        case (let t?, let l?): goal = min(t, l)
        case (let t?, nil): goal = t
        case (nil, let l?): goal = l
        case (nil, nil): return nil
        }
        return played >= goal ? now : now + (goal - played)
    }

    private func rewardConditionMet(at now: AdInstant) -> Bool {
        guard let reward = contract.reward, failure == nil, let renderedAt else { return false }
        if !contract.isVideo { return now >= renderedAt + (reward.minimumView ?? .zero) }
        if endedAt != nil { return true }
        guard let minimum = reward.minimumView, playbackStartedAt != nil else { return false }
        return played >= minimum
    }

    /// The reward falls due once its condition holds (the close rule: the minimum on screen for an image, played or
    /// the video's end for a video) *and* the user has been on the ad for the minimum (end card included): a video
    /// shorter than the minimum is claimed when the time on the ad reaches it, never at its end with a
    /// `viewed` below the minimum while the user is still there (GrowthCat seed: "Once the user has watched for
    /// minimum_view_seconds … the SDK calls POST /v1/ads/reward/validate with the actual elapsed seconds").
    private func claimDue(at now: AdInstant) -> Bool {
        guard let reward = contract.reward, rewardConditionMet(at: now), let renderedAt else { return false }
        return now - renderedAt >= (reward.minimumView ?? .zero)
    }

    private mutating func claimIfDue(at now: AdInstant) -> [Output] {
        guard !rewardClaimed, !isClosed, claimDue(at: now) else { return [] }
        return claim(at: now)
    }

    /// At a close tap the reward condition holds (the close is shown only then): what was not claimed yet is claimed
    /// now with the actual elapsed seconds, even below the minimum (a video shorter than it, closed at its end);
    /// the server decides.
    private mutating func claimAtClose(at now: AdInstant) -> [Output] {
        guard !rewardClaimed, !isClosed, rewardConditionMet(at: now) else { return [] }
        return claim(at: now)
    }

    private mutating func claim(at now: AdInstant) -> [Output] {
        guard let renderedAt else { return [] }
        rewardClaimed = true
        let completed = !contract.isVideo || endedAt != nil
        return [.rewardDue(RewardClaim(viewed: now - renderedAt, completed: completed))]
    }

    private mutating func finalEvents() -> [Output] {
        isClosed = true
        isStalled = false
        return sent.contains(.impression) ? emit(.closed) : []
    }

    private mutating func emit(_ event: AdEvent) -> [Output] {
        sent.insert(event).inserted ? [.event(event)] : []
    }

    private mutating func quartiles(upTo fraction: Double) -> [Output] {
        var out: [Output] = []
        for percent in [25, 50, 75] where fraction * 100 >= Double(percent) {
            out += emit(.videoProgress(percent: percent))
        }
        return out
    }
}

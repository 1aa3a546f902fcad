/// A reward the network confirmed: grant exactly this.
public struct AdReward: Hashable, Sendable, CustomStringConvertible {
    /// The reward's name (`coins`).
    public var name: String
    /// How much of it.
    public var amount: Double

    /// Creates a reward.
    public init(name: String, amount: Double) {
        self.name = name
        self.amount = amount
    }

    /// `"10.0 coins"`.
    public var description: String { "\(amount) \(name)" }
}

/// The figures a rewarded ad's reward is validated with, once its condition is met.
public struct RewardClaim: Hashable, Sendable {
    /// How long the ad was on screen.
    public var viewed: Duration
    /// Whether the creative was watched to its end (always true for an image).
    public var completed: Bool

    /// Creates a claim.
    public init(viewed: Duration, completed: Bool) {
        self.viewed = viewed
        self.completed = completed
    }
}

/// The presentation rules of one full-screen ad, as an adapter defines them: its network's ``contract`` (which events,
/// what counts them, when the close button appears, when a reward is due), how the network validates a reward, and
/// what is delivered at the end. The adapter never times an event: ``LoadedAd/presentFullScreen(on:clock:)`` feeds the
/// renderer's signals and the clock to a `FullScreenLedger` under this contract, and reports what it decides.
///
/// An adapter gives its rules to the ad it creates (the `fullScreenRules` argument of ``LoadedAd``'s initializer); an
/// ad without rules is shown with ``StandardFullScreenRules``.
///
/// Rules written before the ledger timed their own events (`start(at:)`, `advance(to:)`, `playbackEnded(at:)`,
/// `click(at:)`, `close(at:)`, `dismissed(at:)`, `rewardClaim(at:)`, `nextChange(after:)`, `closeAvailableAt`):
/// those are no longer called; state the same rules as a ``contract``.
public protocol FullScreenRules: Sendable {
    /// Whether the app must show a "Sponsored" label.
    var showsSponsoredLabel: Bool { get }
    /// The network's rules for this ad, applied by the ledger.
    var contract: FullScreenContract { get }
    /// Asks the network to confirm `claim`: the reward to grant, or nil when the network refuses it.
    func validateReward(_ claim: RewardClaim) async throws(AdError) -> AdReward?
    /// The presentation is over: deliver what is pending (for example a queue of events). Returns when everything
    /// queued was accepted by the network; throws when something is still queued (the adapter keeps it and retries).
    func finish() async throws(AdError)
}

extension FullScreenRules {
    /// No reward by default.
    public func validateReward(_ claim: RewardClaim) async throws(AdError) -> AdReward? { nil }
    /// Nothing pending by default.
    public func finish() async throws(AdError) {}
}

/// The rules of an ad whose adapter defines none: ``FullScreenContract/standard`` (`impression` when it renders, one
/// `click`, the close button at once, `ad_closed` when it goes; no reward).
public struct StandardFullScreenRules: FullScreenRules {
    /// Creates the rules.
    public init() {}
    /// Shown.
    public var showsSponsoredLabel: Bool { true }
    /// ``FullScreenContract/standard``.
    public var contract: FullScreenContract { .standard }
}

/// What the app's screen shows of a full-screen ad at a moment: the ledger decides, the app renders.
public struct FullScreenState: Hashable, Sendable {
    /// Whether a "Sponsored" label must be shown.
    public var showsSponsoredLabel: Bool
    /// Whether the close button is visible.
    public var closeVisible: Bool
    /// When the close button is expected (for a countdown): see `FullScreenLedger.closeExpectedAt(now:)`; nil while
    /// unknown.
    public var closeAvailableAt: AdInstant?
    /// The reward the network confirmed, once it has.
    public var reward: AdReward?
    /// Whether the ad was closed (or dismissed).
    public var isClosed: Bool
    /// What the renderer shows: an image, or a video with the length its network declared.
    public var creative: FullScreenContract.Creative = .image
    /// Whether the creative failed (``FullScreenControls/playbackFailed(_:)``).
    public var hasFailed = false
    /// Whether the ad offers a reward (its network's contract states a reward condition).
    public var offersReward = false
    /// Whether the reward's condition was met and its claim went to the network for validation
    /// (`FullScreenLedger.rewardClaimed`); the network's answer is ``reward``.
    public var rewardClaimed = false
    /// How much of a video was played, 0…1: the furthest position played over the media's length (1 at its real
    /// end); nil for an image, or for a video whose length neither the renderer nor the network gave.
    public var progress: Double? = nil
}

/// One step of a presentation, in order, with the instant it happened.
public struct FullScreenLogEntry: Hashable, Sendable, CustomStringConvertible {
    /// What happened.
    public enum Kind: Hashable, Sendable {
        /// The event was reported; `delivery` says how far it got (queued until the server accepted it, delivered
        /// after; not sent where the network does not track it).
        case event(AdEvent, delivery: AdEventDelivery)
        /// Reporting the event failed.
        case eventFailed(AdEvent, AdError)
        /// The user asked to close too early; the button is expected at this instant (nil: not known yet).
        case closeRefused(availableAt: AdInstant?)
        /// The ad left the screen without the close button.
        case dismissed
        /// The renderer said the creative failed: no more progress, the close button available, no completed view.
        case playbackFailed(reason: String)
        /// The network confirmed the reward.
        case rewardGranted(AdReward)
        /// The network refused the reward: grant nothing.
        case rewardRefused
        /// The reward could not be validated: grant nothing.
        case rewardFailed(AdError)
        /// The adapter could not deliver everything at the end (it keeps it and retries).
        case finishFailed(AdError)
    }

    /// When, on the presentation's clock.
    public var at: AdInstant
    /// What.
    public var kind: Kind

    /// Whether this step is a failure (an event, the creative, the reward's validation or the final delivery failed,
    /// or a close was refused).
    public var isFailure: Bool {
        switch kind {
        case .eventFailed, .closeRefused, .rewardFailed, .finishFailed, .playbackFailed: true
        case .event, .dismissed, .rewardGranted, .rewardRefused: false
        }
    }

    /// `"video_progress(25%) queued"`, `"ad_closed not sent (the network does not track it)"`, `"close refused"`, ….
    public var description: String {
        switch kind {
        case .event(let event, let delivery): "\(event) \(delivery)"
        case .eventFailed(let event, let error): "\(event) failed: \(error)"
        case .closeRefused(let at): "close refused: the button appears at \(at.map { "\($0)" } ?? "the end")"
        case .dismissed: "dismissed"
        case .playbackFailed(let reason): "playback failed: \(reason)"
        case .rewardGranted(let reward): "reward granted: \(reward)"
        case .rewardRefused: "reward refused by the network"
        case .rewardFailed(let error): "reward not validated: \(error)"
        case .finishFailed(let error): "delivery incomplete: \(error)"
        }
    }
}

/// How a full-screen presentation ended.
public struct FullScreenResult: Sendable {
    /// The reward to grant: nil unless the network confirmed one.
    public var reward: AdReward?
    /// Every step, in order.
    public var log: [FullScreenLogEntry]
}

/// The app's side of a full-screen ad: it renders the ad, and reports what the renderer and the user do through the
/// controls.
///
/// ``present(_:controls:)`` is called at once (nothing waits for the network first) and returns when the ad has left
/// the screen: normally after ``FullScreenControls/closeTapped()`` returned true; returning earlier counts as a
/// dismissal (the app was backgrounded, the view went away).
public protocol FullScreenPresenter: Sendable {
    /// Shows `ad` until it leaves the screen; reads ``FullScreenControls/state`` for the label, countdown and close
    /// button, and calls the controls for the renderer's signals and the user's taps.
    func present(_ ad: LoadedAd, controls: FullScreenControls) async
}

/// What the app's renderer reports about a full-screen ad. With the clock, these are the only inputs its events,
/// close button and reward come from: nothing is timed from the moment the ad was handed to the presenter.
public enum RendererSignal: Hashable, Sendable, CustomStringConvertible {
    /// The ad began to render on screen (the IAB/MRC "begin to render" moment; for a video, its first frame).
    case renderBegan
    /// A video's playback started (its first frame is on screen).
    case playbackStarted
    /// A video's playback reached `position` (the furthest point played counts; seeking back un-sends nothing), in a
    /// media of length `of` when the renderer knows it (else the length the network declared).
    case playbackProgressed(to: Duration, of: Duration? = nil)
    /// Playback stopped to buffer. Nothing is timed from a stall: a renderer that gives up sends
    /// ``playbackFailed(reason:)``.
    case playbackStalled
    /// Playback goes on after a stall.
    case playbackResumed
    /// The creative cannot be played (or rendered) any further: no more progress, the close button is available, and
    /// the video never counts as completed.
    case playbackFailed(reason: String)
    /// A video's playback reached its real end.
    case playbackEnded
    /// The user tapped the ad (each tap is a signal of its own).
    case tapped
    /// The user tapped the close button.
    case closeTapped

    /// `render_began`, `playback_progressed(12.5s)`, ….
    public var description: String {
        switch self {
        case .renderBegan: "render_began"
        case .playbackStarted: "playback_started"
        case .playbackProgressed(let position, let length):
            "playback_progressed(\(position.seconds)s\(length.map { " of \($0.seconds)s" } ?? ""))"
        case .playbackStalled: "playback_stalled"
        case .playbackResumed: "playback_resumed"
        case .playbackFailed(let reason): "playback_failed(\(reason))"
        case .playbackEnded: "playback_ended"
        case .tapped: "tapped"
        case .closeTapped: "close_tapped"
        }
    }
}

/// A network's rules for one full-screen ad, as data: which events it tracks and what starts them, when its close
/// button appears and when its reward is due. Adapters state them (``FullScreenRules/contract``); the
/// `FullScreenLedger` applies them to the renderer's signals. No adapter times an event itself.
public struct FullScreenContract: Hashable, Sendable {
    /// What is shown.
    public enum Creative: Hashable, Sendable {
        /// A still creative (an image, a card): no playback.
        case image
        /// A video, with the length the network declared when it did (the renderer's own length wins).
        case video(duration: Duration?)
    }

    /// What counts the impression.
    public enum Impression: Hashable, Sendable {
        /// ``RendererSignal/renderBegan`` (for a video that is its first frame; ``RendererSignal/playbackStarted``
        /// implies it).
        case renderBegan
        /// For a video, ``RendererSignal/playbackStarted`` ("impression fire[s] when playback begins"); for an image,
        /// the same as ``renderBegan``.
        case playbackStarted
    }

    /// When the close button appears (for an ad without a reward; a rewarded ad's appears when its reward is due).
    /// Whatever the case, it appears at once when the creative fails, and never before the ad rendered.
    public enum Close: Hashable, Sendable {
        /// As soon as the ad rendered.
        case immediately
        /// This long after the ad rendered, by the clock.
        case afterShown(Duration)
        /// After this much of the video was played (or at its end); for an image, this long after it rendered.
        case afterPlayed(Duration)
        /// At the video's real end ("cannot close until video finishes"); for an image, as soon as it rendered.
        case atEnd
    }

    /// How clicks are counted.
    public enum Clicks: Hashable, Sendable {
        /// One `click` per ad, however often it is tapped.
        case oncePerAd
        /// One `click` per tap ("once per tap").
        case eachTap
    }

    /// A rewarded ad's condition.
    public struct Reward: Hashable, Sendable {
        /// How long the ad must be watched: on screen for an image, played for a video. For a video the real end
        /// also meets it ("until minimum_view_seconds elapses (or the video finishes)"); nil: an image's reward is due
        /// when it renders, a video's at its end.
        public var minimumView: Duration?

        /// Creates the condition.
        public init(minimumView: Duration?) { self.minimumView = minimumView }
    }

    /// What is shown.
    public var creative: Creative
    /// What counts the impression.
    public var impression: Impression
    /// When the close button appears.
    public var close: Close
    /// How clicks are counted.
    public var clicks: Clicks
    /// The reward's condition; nil for an ad without a reward.
    public var reward: Reward?

    /// Creates a contract.
    public init(
        creative: Creative, impression: Impression = .renderBegan, close: Close = .immediately,
        clicks: Clicks = .oncePerAd, reward: Reward? = nil
    ) {
        self.creative = creative
        self.impression = impression
        self.close = close
        self.clicks = clicks
        self.reward = reward
    }

    /// An ad whose network states nothing: `impression` when it renders, one `click`, the close button at once,
    /// `ad_closed` when it goes; no reward.
    public static let standard = FullScreenContract(creative: .image)

    /// Whether the creative is a video.
    public var isVideo: Bool {
        if case .video = creative { return true }
        return false
    }
}

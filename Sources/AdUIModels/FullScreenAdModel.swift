import AdMediation
import Observation

/// A full-screen ad (interstitial, rewarded) as an observable model: the app's view draws ``creative`` with the
/// countdown, the close button, the "Sponsored" label, the progress and the reward state this model publishes, and
/// calls its methods for what the renderer and the user do.
///
/// The model owns no rule. ``present()`` runs the core's full-screen presentation (`LoadedAd.presentFullScreen`), whose
/// ledger decides every event, the close button and the reward from the renderer's signals and the clock; the model
/// forwards the signals to that presentation's `FullScreenControls` and publishes the state the ledger decided. While
/// the ad is on screen one task of the model wakes on the clock when the countdown's text changes (at least once a
/// second, to pick up the reward's validation); it ends with the presentation.
///
/// ```swift
/// let model = FullScreenAdModel(ad: ad)
/// let result = try await model.present()   // the view shows the ad while `phase == .showing`
/// ```
@MainActor
@Observable
public final class FullScreenAdModel {
    /// Where the presentation is.
    public enum Phase: Hashable, Sendable {
        /// Not presented yet: call ``FullScreenAdModel/present()``.
        case ready
        /// On screen: draw the ad and report the renderer's signals.
        case showing
        /// Closed or dismissed: ``FullScreenAdModel/result`` says how it ended.
        case finished
    }

    /// Where the ad's reward is.
    public enum RewardState: Hashable, Sendable {
        /// The ad offers no reward.
        case notOffered
        /// The reward's condition is not met yet (keep watching).
        case pending
        /// The condition was met; the network is asked to confirm the reward.
        case validating
        /// The network confirmed this reward: grant exactly it.
        case granted(AdReward)
        /// The presentation ended without a confirmed reward (not earned, refused or not validated): grant nothing.
        case notGranted
    }

    /// What to draw (image or video URL, markup, size, text fields).
    public let creative: AdCreative
    /// Whether the creative is an image or a video (with the length its network declared).
    public private(set) var media: FullScreenContract.Creative = .image
    /// Where the presentation is.
    public private(set) var phase: Phase = .ready
    /// The disclosure label to show ("Sponsored", or the network's own wording); nil when the network asks for none.
    public private(set) var sponsoredLabel: String?
    /// Whether the close button is visible.
    public private(set) var closeVisible = false
    /// Whole seconds until the close button appears (rounded up), for a countdown; nil while it is visible or while
    /// its moment is unknown (not rendered yet, a video of unknown length).
    public private(set) var secondsUntilClose: Int?
    /// How much of a video was played, 0…1; nil for an image or a video of unknown length.
    public private(set) var progress: Double?
    /// Where the reward is.
    public private(set) var reward: RewardState = .notOffered
    /// Whether the creative failed to play or render (the close button is then available).
    public private(set) var hasFailed = false
    /// How the presentation ended: the confirmed reward and every step; nil until it has.
    public private(set) var result: FullScreenResult?

    /// The countdown's text: `"5"`, `"4"`, …; nil when ``secondsUntilClose`` is. Localise around it.
    public var countdownText: String? { secondsUntilClose.map { "\($0)" } }

    @ObservationIgnored private let ad: LoadedAd
    @ObservationIgnored private let clock: any AdClock
    @ObservationIgnored private let screen = ScreenGate()
    @ObservationIgnored private var controls: FullScreenControls?
    @ObservationIgnored private var controlsWaiters: [CheckedContinuation<FullScreenControls?, Never>] = []
    @ObservationIgnored private var ticker: Task<Void, Never>?
    @ObservationIgnored private var closeAt: AdInstant?

    /// A model for `ad` (loaded through a `Mediator` or one network), presented on `clock` (the one the ad was
    /// loaded on; inject a manual clock in tests).
    public init(ad: LoadedAd, clock: any AdClock = SystemAdClock()) {
        self.ad = ad
        self.clock = clock
        self.creative = ad.creative
    }

    /// Presents the ad and returns once it has left the screen (the close button, or ``dismissed()``), with the
    /// reward the network confirmed and the log. ``phase`` is ``Phase/showing`` meanwhile. Throws like
    /// `LoadedAd.presentFullScreen` (an expired, invalidated or already presented ad), and when called twice.
    /// Cancelling the calling task dismisses the ad.
    @discardableResult
    public func present() async throws(AdError) -> FullScreenResult {
        guard phase == .ready else {
            throw AdError(.invalidState, "the model of ad \(creative.id) was already presented")
        }
        phase = .showing
        let presenter = ModelPresenter(model: self, screen: screen)
        do {
            let result = try await ad.presentFullScreen(on: presenter, clock: clock)
            finish(result)
            return result
        } catch {
            finish(nil)
            throw error
        }
    }

    // MARK: The renderer's signals and the user's taps

    /// The ad began to render (for a video, its first frame is on screen): the impression, per the network's rules.
    public func renderBegan() async { await send { await $0.renderBegan() } }

    /// The video's playback started.
    public func playbackStarted() async { await send { await $0.playbackStarted() } }

    /// The video played to `position`, in a media of length `length` when the renderer knows it.
    public func playbackProgressed(to position: Duration, of length: Duration? = nil) async {
        await send { await $0.playbackProgressed(to: position, of: length) }
    }

    /// Playback stopped to buffer.
    public func playbackStalled() async { await send { await $0.playbackStalled() } }

    /// Playback goes on after a stall.
    public func playbackResumed() async { await send { await $0.playbackResumed() } }

    /// The creative cannot play or render any further, for `reason`: the close button becomes available.
    public func playbackFailed(_ reason: String) async { await send { await $0.playbackFailed(reason) } }

    /// The video reached its real end.
    public func playbackEnded() async { await send { await $0.playbackEnded() } }

    /// The user tapped the ad (open the click-through too).
    public func tapped() async { await send { await $0.tapped() } }

    /// The user tapped close: true when the ad closed (``present()`` then returns), false when the close button is
    /// not available yet (nothing else happens).
    @discardableResult
    public func closeTapped() async -> Bool {
        guard let controls = await currentControls() else { return false }
        let closed = await controls.closeTapped()
        apply(controls.state)
        if closed { screen.open() }
        return closed
    }

    /// The ad left the screen without the close button (the app went away, the view was torn down): a dismissal.
    public func dismissed() {
        guard phase == .showing else { return }
        screen.open()
    }

    // MARK: Internals

    /// The presenter handed over its controls: the ad is on screen.
    fileprivate func attach(_ controls: FullScreenControls) {
        guard phase == .showing, self.controls == nil else { return }
        self.controls = controls
        apply(controls.state)
        for waiter in controlsWaiters { waiter.resume(returning: controls) }
        controlsWaiters = []
        startTicker(controls)
    }

    private func send(_ signal: @Sendable (FullScreenControls) async -> Void) async {
        guard let controls = await currentControls() else { return }
        await signal(controls)
        apply(controls.state)
    }

    /// The presentation's controls; a signal sent between ``present()`` and the presenter's call waits for them.
    private func currentControls() async -> FullScreenControls? {
        guard phase == .showing else { return nil }
        if let controls { return controls }
        return await withCheckedContinuation { controlsWaiters.append($0) }
    }

    /// Wakes when the countdown's text changes (at least once a second) and publishes the ledger's state.
    private func startTicker(_ controls: FullScreenControls) {
        let clock = clock
        ticker = Task { [weak self] in
            while !Task.isCancelled {
                guard let wake = self?.nextWake() else { return }
                do { try await clock.sleep(until: wake) } catch { return }
                let state = await controls.refresh()
                guard let self, self.phase == .showing else { return }
                self.apply(state)
            }
        }
    }

    private func nextWake() -> AdInstant {
        let now = clock.now
        let latest = now + .seconds(1)
        guard let closeAt, let seconds = secondsUntilClose, seconds > 0 else { return latest }
        // The text shows `seconds` until the time left drops to `seconds - 1`.
        return min(latest, closeAt - .seconds(seconds - 1))
    }

    private func apply(_ state: FullScreenState) {
        let now = clock.now
        set(\.media, state.creative)
        set(\.sponsoredLabel, state.showsSponsoredLabel ? (creative.disclosureLabel ?? "Sponsored") : nil)
        set(\.closeVisible, state.closeVisible)
        closeAt = state.closeAvailableAt
        set(\.secondsUntilClose, Self.seconds(until: state.closeAvailableAt, now: now, visible: state.closeVisible))
        set(\.progress, state.progress)
        set(\.hasFailed, state.hasFailed)
        let reward: RewardState =
            if !state.offersReward { .notOffered } else if let granted = state.reward {
                .granted(granted)
            } else if state.rewardClaimed { .validating } else { .pending }
        set(\.reward, reward)
    }

    private func finish(_ result: FullScreenResult?) {
        ticker?.cancel()
        ticker = nil
        for waiter in controlsWaiters { waiter.resume(returning: nil) }
        controlsWaiters = []
        if let controls { apply(controls.state) }
        if reward != .notOffered { set(\.reward, result?.reward.map(RewardState.granted) ?? RewardState.notGranted) }
        self.result = result
        phase = .finished
    }

    /// Assigns only a changed value, so an unchanged refresh notifies no observer (the `@Observable` expansion of
    /// Swift 6.3 skips equal values itself; an app built with an older compiler may get one without that check).
    private func set<Value: Equatable>(_ keyPath: ReferenceWritableKeyPath<FullScreenAdModel, Value>, _ value: Value) {
        if self[keyPath: keyPath] != value { self[keyPath: keyPath] = value }
    }

    static func seconds(until at: AdInstant?, now: AdInstant, visible: Bool) -> Int? {
        guard !visible, let at, at > now else { return nil }
        return Int((at - now).seconds.rounded(.up))
    }
}

/// The presenter the core calls: it hands the controls to the model and stays until the model lets the ad go.
private struct ModelPresenter: FullScreenPresenter {
    let model: FullScreenAdModel
    let screen: ScreenGate

    func present(_ ad: LoadedAd, controls: FullScreenControls) async {
        await model.attach(controls)
        await screen.wait()
    }
}

/// Opened once, when the ad may leave the screen (or the presenter's task is cancelled); one waiter.
final class ScreenGate: Sendable {
    private let state = LockedValue<(open: Bool, waiter: CheckedContinuation<Void, Never>?)>((false, nil))

    /// Lets the waiter go (now or when it comes).
    func open() {
        let waiter = state.withLock { s -> CheckedContinuation<Void, Never>? in
            s.open = true
            defer { s.waiter = nil }
            return s.waiter
        }
        waiter?.resume()
    }

    /// Returns once opened or cancelled.
    func wait() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                let ready = state.withLock { s -> Bool in
                    if s.open { return true }
                    s.waiter = c
                    return false
                }
                if ready { c.resume() }
            }
        } onCancel: {
            open()
        }
    }
}

/// What a presenter calls while the ad is on screen: the renderer's real signals (``renderBegan()``,
/// ``playbackStarted()``, ``playbackProgressed(to:of:)``, ``playbackStalled()``, ``playbackResumed()``,
/// ``playbackFailed(_:)``, ``playbackEnded()``) and the user's taps (``tapped()``, ``closeTapped()``). Every call first
/// brings the ledger up to the clock's now, then applies the signal; it returns once the ledger decided, never after
/// the network: reporting happens in the background, in order.
///
/// The calls from before the renderer signals map onto them: ``click()`` is ``tapped()``, ``close()`` is
/// ``closeTapped()``, ``refresh()`` applies the clock only, and ``playbackEnded()`` now means a *real* end (a renderer
/// whose playback failed calls ``playbackFailed(_:)``, which earns no `video_complete` and no completed view). Nothing
/// is counted from presentation any more: a presenter calls ``renderBegan()`` when the ad is on screen.
public final class FullScreenControls: Sendable {
    enum Command: Sendable {
        /// A signal (nil: the clock only); answered with whether the ad is closed.
        case signal(RendererSignal?, CheckedContinuation<Bool, Never>)
        case presenterReturned

        /// Resumes a waiting caller with the answer for a presentation that is over.
        func abandon() {
            switch self {
            case .presenterReturned: break
            case .signal(_, let c): c.resume(returning: true)
            }
        }
    }

    private struct Mailbox {
        var queue: [Command] = []
        var waiter: CheckedContinuation<Command?, Never>?
        var closed = false
    }

    private let mailbox = LockedValue(Mailbox())
    private let current: LockedValue<FullScreenState>
    /// When the driver's timer wakes next.
    let nextWake: LockedValue<AdInstant>

    init(state: FullScreenState, nextWake: AdInstant) {
        self.current = LockedValue(state)
        self.nextWake = LockedValue(nextWake)
    }

    /// What to show, as of the last call (or the last timed change).
    public var state: FullScreenState { current.withLock { $0 } }

    func update(_ body: (inout FullScreenState) -> Void) { current.withLock { body(&$0) } }

    /// Applies what the clock made due by now and returns the state to show.
    @discardableResult
    public func refresh() async -> FullScreenState {
        _ = await signal(nil)
        return state
    }

    /// The ad began to render (for a video, its first frame is on screen).
    public func renderBegan() async { _ = await signal(.renderBegan) }

    /// The video's playback started.
    public func playbackStarted() async { _ = await signal(.playbackStarted) }

    /// The video played to `position`, in a media of length `length` when the renderer knows it.
    public func playbackProgressed(to position: Duration, of length: Duration? = nil) async {
        _ = await signal(.playbackProgressed(to: position, of: length))
    }

    /// Playback stopped to buffer.
    public func playbackStalled() async { _ = await signal(.playbackStalled) }

    /// Playback goes on after a stall.
    public func playbackResumed() async { _ = await signal(.playbackResumed) }

    /// The creative cannot play (or render) any further, for `reason`: the close button becomes available.
    public func playbackFailed(_ reason: String) async { _ = await signal(.playbackFailed(reason: reason)) }

    /// The video's playback reached its real end. (Before the renderer signals this meant "ended or failed"; a failure
    /// is now ``playbackFailed(_:)``.)
    public func playbackEnded() async { _ = await signal(.playbackEnded) }

    /// The user tapped the ad.
    public func tapped() async { _ = await signal(.tapped) }

    /// The user tapped the ad: the same as ``tapped()``.
    public func click() async { await tapped() }

    /// The user tapped close: true when the ad closed (then return from ``FullScreenPresenter/present(_:controls:)``),
    /// false when the close button is not available yet.
    public func closeTapped() async -> Bool { await signal(.closeTapped) }

    /// The user tapped close: the same as ``closeTapped()``.
    public func close() async -> Bool { await closeTapped() }

    /// Applies `signal` (nil: the clock only); returns whether the ad is closed.
    func signal(_ signal: RendererSignal?) async -> Bool {
        await withCheckedContinuation { send(.signal(signal, $0)) }
    }

    func send(_ command: Command) {
        enum Delivery {
            case queued
            case now(CheckedContinuation<Command?, Never>)
            case refused
        }
        let delivery: Delivery = mailbox.withLock { m in
            if m.closed { return .refused }
            if let waiter = m.waiter {
                m.waiter = nil
                return .now(waiter)
            }
            m.queue.append(command)
            return .queued
        }
        switch delivery {
        case .queued: break
        case .now(let waiter): waiter.resume(returning: command)
        case .refused: command.abandon()
        }
    }

    /// The driver's next command, in the order they were sent; nil once the mailbox is closed and empty.
    func next() async -> Command? {
        await withCheckedContinuation { (c: CheckedContinuation<Command?, Never>) in
            let ready: Command?? = mailbox.withLock { m in
                if !m.queue.isEmpty { return .some(m.queue.removeFirst()) }
                if m.closed { return .some(nil) }
                m.waiter = c
                return nil
            }
            if let ready { c.resume(returning: ready) }
        }
    }

    /// Closes the mailbox: later commands get the answer of a closed presentation; returns those already queued.
    func closeMailbox() -> [Command] {
        mailbox.withLock { m in
            m.closed = true
            defer { m.queue = [] }
            return m.queue
        }
    }
}

extension LoadedAd {
    /// Presents this ad full screen on `presenter` and returns once it has left the screen, with the reward the
    /// network confirmed (if any) and the log of what was reported.
    ///
    /// The presenter is called at once. A `FullScreenLedger` under the adapter's ``FullScreenRules/contract``
    /// decides every event, the close button and the reward from the presenter's renderer signals and `clock` (inject
    /// a `ManualAdClock` to drive a presentation without waiting); the events are reported in order, once each,
    /// through ``deliver(_:repeating:age:occurredAt:)`` in the background (each stamped with its signal's instant),
    /// so neither the presenter nor a tap ever waits on the network. The reward is validated in a background lane of
    /// its own (a slow events endpoint never delays it). Returns after the presenter returned and what was decided
    /// was handed to the network (the rules' final delivery gets at most 1 s on `clock`; what it leaves queued is sent
    /// later). Throws ``AdError/Code/invalidState`` for an ad that is invalidated, expired or already presented.
    /// Cancelling the calling task cancels the presenter's task.
    ///
    /// ```swift
    /// let reward = try await ad.presentFullScreen(on: presenter).reward
    /// ```
    public func presentFullScreen(
        on presenter: some FullScreenPresenter, clock: any AdClock = SystemAdClock()
    ) async throws(AdError) -> FullScreenResult {
        let start = clock.now
        if isExpired(at: start) { throw AdError(.invalidState, "ad \(creative.id) from \(networkID) has expired") }
        try beginPresentation()
        let driver = FullScreenDriver(ad: self, rules: fullScreenRules, clock: clock)
        return await driver.run(presenter: presenter, start: start)
    }
}

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
    /// The presenter is called at once. A ``FullScreenLedger`` under the adapter's ``FullScreenRules/contract``
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

/// Runs one presentation: one loop applies the presenter's signals and the timer's ticks to the ledger, in order;
/// two background lanes report what the ledger decided, each in order: the events and notes, and the reward's
/// validation (so a slow events endpoint never delays the reward).
struct FullScreenDriver {
    let ad: LoadedAd
    let rules: any FullScreenRules
    let clock: any AdClock

    /// The latest the timer sleeps when the ledger has nothing timed (the state's countdown is kept fresh).
    static let longestTick: Duration = .seconds(1)

    /// How long, on the presentation's clock, the end of a presentation waits for the rules' final delivery
    /// (``FullScreenRules/finish()``) before it gives up on it (what is queued stays queued, for the network's own
    /// delivery): event delivery never holds the app that waits for the user to be done.
    static let finishGrace: Duration = .seconds(1)

    /// What the background reporter does, in order.
    enum Job: Sendable {
        case report(AdEvent, at: AdInstant, repeating: Bool)
        case validate(RewardClaim, at: AdInstant)
        case note(FullScreenLogEntry)
    }

    func run(presenter: some FullScreenPresenter, start: AdInstant) async -> FullScreenResult {
        var ledger = FullScreenLedger(contract: rules.contract, presentedAt: start)
        let controls = FullScreenControls(
            state: Self.state(ledger, label: rules.showsSponsoredLabel, at: start), nextWake: Self.wake(ledger, start))
        // Two ordered lanes: events and notes in one, the reward's validation in the other, so a slow events endpoint
        // never delays the reward the app waits for. Each entry keeps its place in the decided order.
        let (jobs, outbox) = AsyncStream.makeStream(of: (Int, Job).self)
        let (rewardJobs, rewardOutbox) = AsyncStream.makeStream(of: (Int, Job).self)
        var sequence = 0
        func post(_ job: Job) {
            sequence += 1
            if case .validate = job { rewardOutbox.yield((sequence, job)) } else { outbox.yield((sequence, job)) }
        }
        let ad = ad, clock = clock, rules = rules
        let log = await withTaskGroup(of: [(Int, FullScreenLogEntry)].self) { outer in
            outer.addTask { await Self.report(jobs, ad: ad, rules: rules, controls: controls, clock: clock) }
            outer.addTask { await Self.report(rewardJobs, ad: ad, rules: rules, controls: controls, clock: clock) }
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    await presenter.present(ad, controls: controls)
                    controls.send(.presenterReturned)
                }
                // The timer: applies what falls due while the user does nothing. It waits for each refresh to be
                // applied before reading the next wake-up, so a wake-up already past never spins.
                group.addTask {
                    while !Task.isCancelled {
                        do { try await clock.sleep(until: controls.nextWake.withLock { $0 }) } catch { return }
                        await controls.refresh()
                    }
                }
                while let command = await controls.next() {
                    let now = clock.now
                    var outputs = ledger.advance(to: now)
                    var done = false
                    var answer: CheckedContinuation<Bool, Never>?
                    switch command {
                    case .signal(let signal, let c):
                        answer = c
                        if let signal {
                            if case .playbackFailed(let reason) = signal, ledger.failure == nil, !ledger.isClosed {
                                post(.note(FullScreenLogEntry(at: now, kind: .playbackFailed(reason: reason))))
                            }
                            outputs += ledger.apply(signal, at: now)
                        }
                    case .presenterReturned:
                        outputs += ledger.dismiss(at: now)
                        done = true
                    }
                    for output in outputs {
                        if let job = Self.job(output, ledger: ledger, at: now) { post(job) }
                    }
                    let fresh = Self.state(ledger, label: rules.showsSponsoredLabel, at: now)
                    controls.update { state in
                        let reward = state.reward
                        state = fresh
                        state.reward = reward
                    }
                    controls.nextWake.withLock { $0 = Self.wake(ledger, now) }
                    // The caller is answered after the state is updated, so what it reads next is current.
                    answer?.resume(returning: ledger.isClosed)
                    if done { break }
                }
                // Anything still queued after the presenter returned gets the answer of a closed presentation.
                group.cancelAll()
                for late in controls.closeMailbox() { late.abandon() }
            }
            outbox.finish()
            rewardOutbox.finish()
            var log: [(Int, FullScreenLogEntry)] = []
            for await part in outer { log += part }
            return log.sorted { $0.0 < $1.0 }.map(\.1)
        }
        var final = log
        switch await Self.finish(rules, clock: clock) {
        case .none where !(rules is StandardFullScreenRules):
            // The rules' own queue was accepted by the network (rules without a queue say nothing about events an
            // adapter queued elsewhere, such as tracking pings: those stay `queued`).
            final = log.map { entry in
                guard case .event(let event, .queued) = entry.kind else { return entry }
                return FullScreenLogEntry(at: entry.at, kind: .event(event, delivery: .delivered))
            }
        case .none:
            break
        case .some(let error):
            final.append(FullScreenLogEntry(at: clock.now, kind: .finishFailed(error)))
        }
        return FullScreenResult(reward: controls.state.reward, log: final)
    }

    /// The rules' final delivery, given ``finishGrace`` on the presentation's clock: nil when everything queued was
    /// accepted, else why not (an error of the rules; the grace passed; the caller was cancelled). The delivery runs
    /// in a task of its own, so a delivery that does not end at its grace (a flush waiting on a hung endpoint, which
    /// cancellation may not reach) no longer holds the caller: it is cancelled and left to end by itself, and what is
    /// queued stays queued for the network's own delivery.
    static func finish(_ rules: any FullScreenRules, clock: any AdClock) async -> AdError? {
        let deadline = clock.now + finishGrace
        let outcome = FirstOutcome<AdError?>()
        let delivery = Task {
            do throws(AdError) {
                try await rules.finish()
                outcome.resume(with: nil)
            } catch {
                outcome.resume(with: error)
            }
        }
        let grace = Task {
            do {
                try await clock.sleep(until: deadline)
                let ms = Int(finishGrace.milliseconds)
                let message = "the final delivery took over \(ms) ms: what is queued stays queued and is sent later"
                outcome.resume(with: AdError(.timeout, message))
            } catch {
                outcome.resume(with: AdError(.cancelled, "the presentation's caller was cancelled"))
            }
        }
        let result = await withTaskCancellationHandler {
            await outcome.value
        } onCancel: {
            grace.cancel()
        }
        delivery.cancel()
        grace.cancel()
        return result
    }

    /// The background job for one of the ledger's outputs; nil for the close itself (its `ad_closed` is an event).
    static func job(_ output: FullScreenLedger.Output, ledger: FullScreenLedger, at now: AdInstant) -> Job? {
        switch output {
        case .event(let event):
            return .report(event, at: now, repeating: event == .click && ledger.contract.clicks == .eachTap)
        case .rewardDue(let claim): return .validate(claim, at: now)
        case .closeRefused(let availableAt):
            return .note(FullScreenLogEntry(at: now, kind: .closeRefused(availableAt: availableAt)))
        case .dismissed: return .note(FullScreenLogEntry(at: now, kind: .dismissed))
        case .closed: return nil
        }
    }

    /// Reports the ledger's decisions in order; returns the log.
    static func report(
        _ jobs: AsyncStream<(Int, Job)>, ad: LoadedAd, rules: any FullScreenRules, controls: FullScreenControls,
        clock: any AdClock
    ) async -> [(Int, FullScreenLogEntry)] {
        var entries: [(Int, FullScreenLogEntry)] = []
        for await (sequence, job) in jobs {
            var log: [FullScreenLogEntry] = []
            defer { entries += log.map { (sequence, $0) } }
            switch job {
            case .note(let entry):
                log.append(entry)
            case .report(let event, let at, let repeating):
                do {
                    let age = max(.zero, clock.now - at)
                    let delivery = try await ad.deliver(event, repeating: repeating, age: age, occurredAt: at)
                    log.append(FullScreenLogEntry(at: at, kind: .event(event, delivery: delivery)))
                } catch let error as AdError {
                    log.append(FullScreenLogEntry(at: at, kind: .eventFailed(event, error)))
                } catch {
                    log.append(FullScreenLogEntry(at: at, kind: .eventFailed(event, AdError(.network, "\(error)"))))
                }
            case .validate(let claim, let at):
                do {
                    if let granted = try await rules.validateReward(claim) {
                        controls.update { $0.reward = granted }
                        log.append(FullScreenLogEntry(at: at, kind: .rewardGranted(granted)))
                    } else {
                        log.append(FullScreenLogEntry(at: at, kind: .rewardRefused))
                    }
                } catch {
                    log.append(FullScreenLogEntry(at: at, kind: .rewardFailed(error)))
                }
            }
        }
        return entries
    }

    static func state(_ ledger: FullScreenLedger, label: Bool, at now: AdInstant) -> FullScreenState {
        FullScreenState(
            showsSponsoredLabel: label, closeVisible: ledger.isCloseAvailable(at: now),
            closeAvailableAt: ledger.closeExpectedAt(now: now), reward: nil, isClosed: ledger.isClosed,
            creative: ledger.contract.creative, hasFailed: ledger.failure != nil,
            offersReward: ledger.contract.reward != nil, rewardClaimed: ledger.rewardClaimed,
            progress: progress(ledger))
    }

    /// The played fraction of a video (1 at its real end); nil for an image or a video of unknown length.
    static func progress(_ ledger: FullScreenLedger) -> Double? {
        guard ledger.contract.isVideo else { return nil }
        if ledger.endedAt != nil { return 1 }
        guard let length = ledger.videoLength, length > .zero else { return nil }
        let fraction = ledger.played.seconds / length.seconds
        return fraction.isFinite ? min(1, max(0, fraction)) : nil
    }

    static func wake(_ ledger: FullScreenLedger, _ now: AdInstant) -> AdInstant {
        let latest = now + longestTick
        guard let next = ledger.nextChange(after: now) else { return latest }
        return min(next, latest)
    }
}

/// The first of several outcomes, awaited once: later ones are ignored.
final class FirstOutcome<Value: Sendable>: Sendable {
    private let state = LockedValue<(value: Value?, done: Bool, waiter: CheckedContinuation<Value, Never>?)>(
        (nil, false, nil))

    /// Settles the outcome unless it was settled before.
    func resume(with value: Value) {
        let waiter = state.withLock { s -> CheckedContinuation<Value, Never>? in
            guard !s.done else { return nil }
            s.done = true
            s.value = value
            defer { s.waiter = nil }
            return s.waiter
        }
        waiter?.resume(returning: value)
    }

    /// The outcome, once settled (one waiter).
    var value: Value {
        get async {
            await withCheckedContinuation { continuation in
                let ready = state.withLock { s -> Value? in
                    if s.done { return s.value }
                    s.waiter = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        }
    }
}

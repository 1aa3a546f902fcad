import Synchronization

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

/// What closing a full-screen ad produced.
public enum FullScreenClose: Sendable, Hashable {
    /// The close button is not available yet; it appears at this instant (nil: when the creative ends).
    case refused(availableAt: AdInstant?)
    /// Closed: send these events, then validate this claim if there is one.
    case closed(events: [AdEvent], claim: RewardClaim?)
}

/// The presentation rules of one full-screen ad, as an adapter defines them: which events are due when, when the close
/// button appears, when a reward is due and how the network validates it. A value driven by explicit instants, so it
/// is tested without a clock; ``LoadedAd/presentFullScreen(on:clock:)`` drives it and reports its events.
///
/// An adapter returns its rules from ``AdEventReporter/fullScreenRules(for:)``; an ad whose adapter returns none is
/// shown with ``StandardFullScreenRules``.
public protocol FullScreenRules: Sendable {
    /// Whether the app must show a "Sponsored" label.
    var showsSponsoredLabel: Bool { get }
    /// When the close button appears (nil: not known yet, for example until a video without a duration ends).
    var closeAvailableAt: AdInstant? { get }
    /// The ad appears at `now`: the first events (`impression`, `video_start`).
    mutating func start(at now: AdInstant) -> [AdEvent]
    /// Time moved to `now`: the events due by then.
    mutating func advance(to now: AdInstant) -> [AdEvent]
    /// The renderer says playback ended (or failed) at `now`.
    mutating func playbackEnded(at now: AdInstant) -> [AdEvent]
    /// The user tapped the ad at `now`.
    mutating func click(at now: AdInstant) -> [AdEvent]
    /// The user asks to close at `now`.
    mutating func close(at now: AdInstant) -> FullScreenClose
    /// The ad left the screen at `now` without the close button (the app or the system removed it): the last events.
    mutating func dismissed(at now: AdInstant) -> [AdEvent]
    /// The reward's figures, once, the first time it is asked at or after its condition is met; nil otherwise.
    mutating func rewardClaim(at now: AdInstant) -> RewardClaim?
    /// The next instant after `now` at which something is due (an event, the close button, a reward); nil if none.
    func nextChange(after now: AdInstant) -> AdInstant?
    /// Asks the network to confirm `claim`: the reward to grant, or nil when the network refuses it.
    func validateReward(_ claim: RewardClaim) async throws(AdError) -> AdReward?
    /// The presentation is over: deliver what is pending (for example a queue of events). Throws when something
    /// could not be delivered now (it is kept and retried by the adapter).
    func finish() async throws(AdError)
}

extension FullScreenRules {
    /// Playback has no rules by default.
    public mutating func playbackEnded(at now: AdInstant) -> [AdEvent] { advance(to: now) }
    /// No reward by default.
    public mutating func rewardClaim(at now: AdInstant) -> RewardClaim? { nil }
    /// No reward by default.
    public func validateReward(_ claim: RewardClaim) async throws(AdError) -> AdReward? { nil }
    /// Nothing pending by default.
    public func finish() async throws(AdError) {}
}

/// The rules of an ad whose adapter defines none: `impression` when it appears, `click` on a tap, the close button at
/// once, `ad_closed` when it goes; no reward.
public struct StandardFullScreenRules: FullScreenRules {
    private var startedAt: AdInstant?

    /// Creates the rules.
    public init() {}
    /// Shown.
    public var showsSponsoredLabel: Bool { true }
    /// As soon as the ad appears.
    public var closeAvailableAt: AdInstant? { startedAt }
    /// `impression`.
    public mutating func start(at now: AdInstant) -> [AdEvent] {
        startedAt = now
        return [.impression]
    }
    /// Nothing is timed.
    public mutating func advance(to now: AdInstant) -> [AdEvent] { [] }
    /// `click`.
    public mutating func click(at now: AdInstant) -> [AdEvent] { [.click] }
    /// Always closes, with `ad_closed`.
    public mutating func close(at now: AdInstant) -> FullScreenClose { .closed(events: [.closed], claim: nil) }
    /// `ad_closed`.
    public mutating func dismissed(at now: AdInstant) -> [AdEvent] { [.closed] }
    /// Nothing is timed.
    public func nextChange(after now: AdInstant) -> AdInstant? { nil }
}

/// What the app's screen shows of a full-screen ad at a moment: the rules decide, the app renders.
public struct FullScreenState: Hashable, Sendable {
    /// Whether a "Sponsored" label must be shown.
    public var showsSponsoredLabel: Bool
    /// Whether the close button is visible.
    public var closeVisible: Bool
    /// When the close button appears (for a countdown); nil while unknown.
    public var closeAvailableAt: AdInstant?
    /// The reward the network confirmed, once it has.
    public var reward: AdReward?
    /// Whether the ad was closed (or dismissed).
    public var isClosed: Bool
}

/// One step of a presentation, in order, with the instant it happened.
public struct FullScreenLogEntry: Hashable, Sendable, CustomStringConvertible {
    /// What happened.
    public enum Kind: Hashable, Sendable {
        /// The event was delivered to the network (`sent` false: it had been reported before, nothing was sent).
        case event(AdEvent, sent: Bool)
        /// Delivering the event failed.
        case eventFailed(AdEvent, AdError)
        /// The user asked to close too early; the button appears at this instant (nil: at the creative's end).
        case closeRefused(availableAt: AdInstant?)
        /// The ad left the screen without the close button.
        case dismissed
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

    /// Whether this step is a failure (an event, the reward's validation or the final delivery failed, or a close
    /// was refused).
    public var isFailure: Bool {
        switch kind {
        case .eventFailed, .closeRefused, .rewardFailed, .finishFailed: true
        case .event, .dismissed, .rewardGranted, .rewardRefused: false
        }
    }

    /// `"video_progress(25%) sent"`, `"close refused"`, ….
    public var description: String {
        switch kind {
        case .event(let event, let sent): "\(event) \(sent ? "sent" : "already sent")"
        case .eventFailed(let event, let error): "\(event) failed: \(error)"
        case .closeRefused(let at): "close refused: the button appears at \(at.map { "\($0)" } ?? "the end")"
        case .dismissed: "dismissed"
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

/// The app's side of a full-screen ad: it renders the ad, and reports what the user does through the controls.
///
/// ``present(_:controls:)`` returns when the ad has left the screen: normally after ``FullScreenControls/close()``
/// returned true; returning earlier counts as a dismissal (the app was backgrounded, the view went away).
public protocol FullScreenPresenter: Sendable {
    /// Shows `ad` until it leaves the screen; reads ``FullScreenControls/state`` for the label, countdown and close
    /// button, and calls the controls for the user's taps.
    func present(_ ad: LoadedAd, controls: FullScreenControls) async
}

/// What a presenter calls while the ad is on screen. Every call first brings the rules up to the clock's now, so the
/// events due by then are sent, in order, before the user's action is applied.
public final class FullScreenControls: Sendable {
    enum Command: Sendable {
        case refresh(CheckedContinuation<Void, Never>)
        case click(CheckedContinuation<Void, Never>)
        case playbackEnded(CheckedContinuation<Void, Never>)
        case close(CheckedContinuation<Bool, Never>)
        case presenterReturned

        /// Resumes a waiting caller with the answer for a presentation that is over.
        func abandon() {
            switch self {
            case .presenterReturned: break
            case .refresh(let c), .click(let c), .playbackEnded(let c): c.resume()
            case .close(let c): c.resume(returning: true)
            }
        }
    }

    private struct Mailbox {
        var queue: [Command] = []
        var waiter: CheckedContinuation<Command?, Never>?
        var closed = false
    }

    private let mailbox = Mutex(Mailbox())
    private let current: Mutex<FullScreenState>
    /// When the driver's timer wakes next.
    let nextWake: Mutex<AdInstant>

    init(state: FullScreenState, nextWake: AdInstant) {
        self.current = Mutex(state)
        self.nextWake = Mutex(nextWake)
    }

    /// What to show, as of the last call (or the last timed change).
    public var state: FullScreenState { current.withLock { $0 } }

    func update(_ state: FullScreenState) { current.withLock { $0 = state } }

    /// Sends what is due by now and returns the state to show.
    @discardableResult
    public func refresh() async -> FullScreenState {
        await withCheckedContinuation { send(.refresh($0)) }
        return state
    }

    /// The user tapped the ad.
    public func click() async { await withCheckedContinuation { send(.click($0)) } }

    /// The renderer's playback ended (or failed and cannot go on).
    public func playbackEnded() async { await withCheckedContinuation { send(.playbackEnded($0)) } }

    /// The user tapped close: true when the ad closed (then return from ``FullScreenPresenter/present(_:controls:)``),
    /// false when the close button is not available yet.
    public func close() async -> Bool { await withCheckedContinuation { send(.close($0)) } }

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
    /// network confirmed (if any) and the log of what was sent.
    ///
    /// The adapter's ``FullScreenRules`` decide the events, the close button and the reward (its own events, reported
    /// once each through ``report(_:)``); `clock` times them (inject a `ManualAdClock` to drive a presentation
    /// without waiting). Throws ``AdError/Code/invalidState`` for an ad that is invalidated, expired or already
    /// presented. Cancelling the calling task cancels the presenter's task; the presentation ends when the presenter
    /// returns.
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
        var driver = FullScreenDriver(ad: self, rules: fullScreenRules, clock: clock)
        return await driver.run(presenter: presenter, start: start)
    }
}

/// Runs one presentation: one loop applies the presenter's commands and the timer's ticks in order.
struct FullScreenDriver {
    let ad: LoadedAd
    var rules: any FullScreenRules
    let clock: any AdClock
    var log: [FullScreenLogEntry] = []
    var reward: AdReward?
    var closed = false

    /// The latest a timed change is waited for when the rules cannot say (a changed video end is picked up by then).
    static let longestTick: Duration = .seconds(1)

    init(ad: LoadedAd, rules: any FullScreenRules, clock: any AdClock) {
        self.ad = ad
        self.rules = rules
        self.clock = clock
    }

    mutating func run(presenter: some FullScreenPresenter, start: AdInstant) async -> FullScreenResult {
        await send(rules.start(at: start), at: start)
        let controls = FullScreenControls(state: state(at: start), nextWake: wake(after: start))
        let ad = ad, clock = clock
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await presenter.present(ad, controls: controls)
                controls.send(.presenterReturned)
            }
            // The timer: sends what falls due while the user does nothing. It waits for each refresh to be applied
            // before reading the next wake-up, so a wake-up already past never spins.
            group.addTask {
                while !Task.isCancelled {
                    do { try await clock.sleep(until: controls.nextWake.withLock { $0 }) } catch { return }
                    await controls.refresh()
                }
            }
            while let command = await controls.next() {
                let now = clock.now
                await catchUp(to: now)
                var done = false
                // The caller is answered after the state is updated, so what it reads next is current.
                var answer: () -> Void = {}
                switch command {
                case .refresh(let c):
                    answer = { c.resume() }
                case .click(let c):
                    if !closed { await send(rules.click(at: now), at: now) }
                    answer = { c.resume() }
                case .playbackEnded(let c):
                    if !closed {
                        await send(rules.playbackEnded(at: now), at: now)
                        await claimReward(at: now)
                    }
                    answer = { c.resume() }
                case .close(let c):
                    await close(at: now)
                    let closed = closed
                    answer = { c.resume(returning: closed) }
                case .presenterReturned:
                    if !closed {
                        log.append(FullScreenLogEntry(at: now, kind: .dismissed))
                        closed = true
                        await send(rules.dismissed(at: now), at: now)
                    }
                    done = true
                }
                controls.update(state(at: now))
                controls.nextWake.withLock { $0 = wake(after: now) }
                answer()
                if done { break }
            }
            // Anything still queued after the presenter returned gets the answer of a closed presentation.
            group.cancelAll()
            for late in controls.closeMailbox() { late.abandon() }
        }
        do {
            try await rules.finish()
        } catch {
            log.append(FullScreenLogEntry(at: clock.now, kind: .finishFailed(error)))
        }
        return FullScreenResult(reward: reward, log: log)
    }

    func state(at now: AdInstant) -> FullScreenState {
        let closeAt = rules.closeAvailableAt
        return FullScreenState(
            showsSponsoredLabel: rules.showsSponsoredLabel, closeVisible: !closed && closeAt.map { now >= $0 } == true,
            closeAvailableAt: closeAt, reward: reward, isClosed: closed)
    }

    func wake(after now: AdInstant) -> AdInstant {
        let latest = now + Self.longestTick
        guard let next = rules.nextChange(after: now) else { return latest }
        return min(next, latest)
    }

    mutating func catchUp(to now: AdInstant) async {
        guard !closed else { return }
        await send(rules.advance(to: now), at: now)
        await claimReward(at: now)
    }

    mutating func close(at now: AdInstant) async {
        guard !closed else { return }
        switch rules.close(at: now) {
        case .refused(let availableAt):
            log.append(FullScreenLogEntry(at: now, kind: .closeRefused(availableAt: availableAt)))
        case .closed(let events, let claim):
            closed = true
            await send(events, at: now)
            if let claim { await validate(claim, at: now) }
        }
    }

    mutating func claimReward(at now: AdInstant) async {
        if let claim = rules.rewardClaim(at: now) { await validate(claim, at: now) }
    }

    mutating func validate(_ claim: RewardClaim, at now: AdInstant) async {
        do {
            if let granted = try await rules.validateReward(claim) {
                reward = granted
                log.append(FullScreenLogEntry(at: now, kind: .rewardGranted(granted)))
            } else {
                log.append(FullScreenLogEntry(at: now, kind: .rewardRefused))
            }
        } catch {
            log.append(FullScreenLogEntry(at: now, kind: .rewardFailed(error)))
        }
    }

    mutating func send(_ events: [AdEvent], at now: AdInstant) async {
        for event in events {
            do {
                let sent = try await ad.report(event)
                log.append(FullScreenLogEntry(at: now, kind: .event(event, sent: sent)))
            } catch let error as AdError {
                log.append(FullScreenLogEntry(at: now, kind: .eventFailed(event, error)))
            } catch {
                log.append(
                    FullScreenLogEntry(at: now, kind: .eventFailed(event, AdError(.network, "\(error)"))))
            }
        }
    }
}

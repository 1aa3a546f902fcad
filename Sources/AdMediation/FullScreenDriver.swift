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

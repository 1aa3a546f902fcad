import AdPrivacy
import Tracing

/// How many mediators decide around the current task: above zero inside a line of another mediator, whose decision
/// then settles the inner winner's auction (``DecisionEngine`` defers it).
enum MediationNesting {
    @TaskLocal static var depth = 0
}

/// The thin driver: runs a ``DecisionEngine`` over one inbox and executes its actions.
extension Mediator {
    enum Input: Sendable {
        /// Slot `i` answered.
        case answer(Int, Result<AdLoadResult, AdError>)
        /// The timer of generation `generation` reached its instant.
        case tick(generation: UInt64)
        /// The calling task was cancelled.
        case callerCancelled
    }

    /// A slot's load as the driver keeps it: how its breaker admitted it, and the task the load runs on (nil once
    /// the load answered, or while its batch has not been launched).
    struct Running {
        var task: Task<Void, Never>?
        let admission: CircuitBreaker.Admission
    }

    /// An answer a line left in its cell (``LineBatch``), with an instant by which it was in.
    struct ReadyAnswer {
        let slot: Int
        let result: Result<AdLoadResult, AdError>
        var at: AdInstant
    }

    /// The driver's side of one request: the engine, and per running slot its ``Running``; the one timer.
    struct Run {
        var engine: DecisionEngine
        /// What the request's lines share: the request as every line sends it before its own fields, the inbox.
        let lines: LineContext
        var inbox: Inbox { lines.inbox }
        var running: [Running?]
        /// The lines the current step starts, launched together at its end (``LineBatch``).
        var starting: [Line] = []
        /// Answers the lines left in their cells, read before the inbox; `readyHead` is the next.
        var ready: [ReadyAnswer] = []
        var readyHead = 0
        var timer: (at: AdInstant, generation: UInt64, task: Task<Void, Never>)?
        var timerGeneration: UInt64 = 0
        var callerCancelled = false
        /// One buffer for the actions of every step.
        var actions: [DecisionEngine.Action] = []
        /// The request's privacy signals, decoded once for every slot's verdict; nil when it carries none (each
        /// route then has its verdict already).
        let privacy: DecodedPrivacy?
        /// Per slot, where its load goes.
        let routes: [PlacementPlan.Route?]
        /// The nesting depth the lines' loads run at.
        let lineDepth = MediationNesting.depth + 1

        /// The next answer a line left in its cell, if any.
        mutating func nextReady() -> ReadyAnswer? {
            guard readyHead < ready.count else { return nil }
            let input = ready[readyHead]
            readyHead += 1
            if readyHead == ready.count {
                ready.removeAll(keepingCapacity: true)
                readyHead = 0
            }
            return input
        }

        init(
            engine: consuming DecisionEngine, plan: PlacementPlan, request: AdRequest, lossNotices: LossNoticeContent,
            tracer: (any Tracer)?, mediator: Mediator
        ) {
            self.privacy = request.privacy == PrivacySignals() ? nil : DecodedPrivacy(request.privacy)
            self.routes = plan.routes
            self.lines = LineContext(
                mediator: mediator, request: request, lossNotices: lossNotices, format: plan.placement.format,
                tracer: tracer, engine: engine)
            self.engine = engine
            // Appended: `Array(repeating:count:)` looks the storage's generic metadata up on every call.
            running = []
            running.reserveCapacity(engine.slots.count)
            for _ in engine.slots.indices { running.append(nil) }
            actions.reserveCapacity(2 * engine.slots.count + 2)
        }
    }

    /// Runs `engine` until it decides, and returns what `conclude` reads from it decided: the caller has its answer
    /// at the decision, whatever the lines still running do.
    ///
    /// Every bidder and line load runs in a task that inherits the caller's priority and task-local values (the trace
    /// context reaches the adapters and their transport) and gives its answer to the driver; the one timer posts to
    /// the request's inbox. The caller's cancellation is posted too, and the engine cancels every load. Loads the
    /// engine gives up on (a timeout, a fill above them, the decision) are cancelled by their task; once decided, the
    /// inbox closes and those still running are counted in ``BackgroundLoads``: each settles lost and invalidates its
    /// own late fill when it returns, so an adapter that ignores cancellation never holds the caller.
    ///
    /// The loads a step starts run as one batch on an immediate task (``LineBatch``): it runs on the caller's thread
    /// until a load first suspends, so loads that answer without suspending cost no thread hand-off, share one task
    /// and leave their answers without a lock; a load that suspends keeps the task to itself, posts its answer to the
    /// inbox, and the loads after it begin in a batch of their own. The timer is only started before the loop really
    /// waits.
    nonisolated(nonsending) func run(
        _ engine: consuming DecisionEngine, plan: PlacementPlan, request: AdRequest, lossNotices: LossNoticeContent,
        tracer: (any Tracer)?, conclude: (borrowing DecisionEngine) -> MediationOutcome
    ) async -> MediationOutcome {
        // Moved, not copied: a copy would share the engine's arrays and copy them on its first step.
        var run = Run(
            engine: consume engine, plan: plan, request: request, lossNotices: lossNotices, tracer: tracer,
            mediator: self)
        let inbox = run.inbox
        await withTaskCancellationHandler {
            // The request's own start: the lines' clocks start with it.
            let begin = run.engine.startedAt
            step(&run, at: begin) { $0.begin(at: begin, into: &$1) }
            while !run.engine.isFinished {
                // An answer already posted is read without suspending; otherwise the loop may wait, and only then
                // needs the timer.
                if let ready = run.nextReady() {
                    handle(.answer(ready.slot, ready.result), &run, at: ready.at)
                } else if let ready = inbox.poll() {
                    handle(ready, &run)
                } else {
                    armTimer(&run)
                    handle(await inbox.next(), &run)
                }
            }
            run.timer?.task.cancel()
            finishInBackground(&run)
        } onCancel: {
            _ = inbox.send(.callerCancelled)
        }
        // Read where it is, not copied out.
        return conclude(run.engine)
    }

    /// Feeds one input to the engine. The caller's cancellation is seen before a line's answer read with it, so it
    /// reaches every line at once and that answer is handled as late; a bid already in hand still counts.
    private func handle(_ input: Input, _ run: inout Run, at instant: AdInstant? = nil) {
        let now = instant ?? clock.now
        let isBid = Self.isBidInHand(input, bidders: run.engine.bidderCount)
        if !isBid { noticeCancellation(&run, at: now) }
        switch input {
        case .answer(let slot, let result):
            step(&run, at: now) { $0.answer(slot, result, at: now, into: &$1) }
            run.running[slot] = nil
        case .tick(let generation):
            guard generation == run.timer?.generation else { break }
            run.timer = nil
            step(&run, at: now) { $0.advance(to: now, into: &$1) }
        case .callerCancelled:
            break
        }
        if isBid { noticeCancellation(&run, at: now) }
    }

    /// A bidder's own answer (not a cancelled load, the cancellation's effect): it counts even when read together with
    /// the caller's cancellation.
    private static func isBidInHand(_ input: Input, bidders: Int) -> Bool {
        guard case .answer(let slot, let result) = input, slot < bidders else { return false }
        if case .failure(let error) = result, error.code == .cancelled { return false }
        return true
    }

    /// Once, when the calling task is cancelled: the engine cancels everything running.
    private func noticeCancellation(_ run: inout Run, at now: AdInstant) {
        guard !run.callerCancelled, Task.isCancelled else { return }
        run.callerCancelled = true
        step(&run, at: now) { $0.callerCancelled(at: now, into: &$1) }
    }

    /// Runs one step of the engine at `now` and executes its actions, and those of slots skipped on the way (breaker
    /// open), in the one buffer.
    private func step(
        _ run: inout Run, at now: AdInstant, _ body: (inout DecisionEngine, inout [DecisionEngine.Action]) -> Void
    ) {
        run.actions.removeAll(keepingCapacity: true)
        body(&run.engine, &run.actions)
        var next = 0
        while next < run.actions.count {
            let action = run.actions[next]
            next += 1
            switch action {
            case .start(let slot):
                prepare(slot, &run, at: now)
            case .cancel(let slot):
                launch(&run, at: now)
                run.running[slot]?.task?.cancel()
            case .settle(let ad, let result):
                ad.settleAuction(result.disclosing(run.lines.request.lossNotices))
            case .invalidate(let ad):
                ad.invalidate()
            case .breaker(let slot, let event):
                recordBreaker(
                    run.engine.slots[slot].network, run.routes[slot]?.breaker,
                    probe: run.running[slot]?.admission == .probe, event)
            case .finish:
                break
            }
        }
        launch(&run, at: now)
    }

    /// Prepares slot `slot` if its network's breaker admits it (else the engine skips it), to be launched at the
    /// step's end (``launch(_:)``).
    private func prepare(_ slot: Int, _ run: inout Run, at now: AdInstant) {
        // Privacy first: a network the rules forbid is never asked (and never counts for its breaker). The line's
        // load restricts its request to what the rules allow the network.
        guard let route = run.routes[slot] else {
            return run.engine.skip(slot, reason: .notReached, at: now, into: &run.actions)
        }
        let verdict = run.privacy.map { PrivacyRules.verdict($0, tcfVendorID: route.tcfVendorID) }
        guard (verdict ?? route.unsignalledVerdict).mayBeAsked else {
            return run.engine.skip(slot, reason: .privacyBlocked, at: now, into: &run.actions)
        }
        let admission = route.breaker?.withLock { $0.admit(at: now) } ?? .allowed
        if admission == .probe { breakerChanged(run.engine.slots[slot].network, to: .halfOpen(probing: true)) }
        guard admission != .rejected else {
            return run.engine.skip(slot, reason: .breakerOpen, at: now, into: &run.actions)
        }
        // Only a mediator running as this line is nested (its winner is this decision's to settle); anything else
        // the line's adapter runs, even a mediator in a task of its own, decides for itself. The load's task inherits
        // the caller's task-local values, so the depth is rebound only when it differs from the caller's.
        let nested = route.isMediator ? run.lineDepth : 0
        run.running[slot] = Running(task: nil, admission: admission)
        run.starting.append(
            Line(slot: slot, route: route, verdict: verdict, depth: nested == run.lineDepth - 1 ? nil : nested))
    }

    /// Launches the lines prepared by the step, in order, as batches on immediate tasks: a batch's task runs its
    /// lines one after another while each answers without suspending; when one suspends, the task keeps only that
    /// line, and the lines not yet begun go to a new batch, so a slow line never delays another and each running load
    /// has a task of its own to cancel.
    private func launch(_ run: inout Run, at now: AdInstant) {
        guard !run.starting.isEmpty else { return }
        var lines: [Line] = []
        swap(&lines, &run.starting)
        guard #available(macOS 26.0, iOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, *) else {
            // No immediate task: one task per line, each a batch of one that is never taken back.
            for line in lines {
                let batch = LineBatch([line], run.lines, alone: true)
                run.running[line.slot]?.task = Task { await batch.run() }
            }
            return
        }
        // The first line begins at the step's instant; a line after one that suspended reads the clock again.
        var begins: AdInstant? = now
        while !lines.isEmpty {
            let batch = LineBatch(lines, run.lines, at: begins)
            begins = nil
            let task = Task.immediate { await batch.run() }
            let answered = run.ready.count
            let handedBack = batch.takeBack(into: &run.ready)
            if run.ready.count > answered {
                // Every answer left in a cell was in by now: one reading of the clock for them all.
                let by = clock.now
                for index in answered..<run.ready.count { run.ready[index].at = by }
            }
            if let current = handedBack.current { run.running[current]?.task = task }
            guard handedBack.begun > 0 else {
                // The task did not begin on this thread (it begins nothing now): a task per line.
                for line in handedBack.rest {
                    let single = LineBatch([line], run.lines, alone: true)
                    run.running[line.slot]?.task = Task { await single.run() }
                }
                return
            }
            lines = handedBack.rest
        }
    }

    /// Keeps exactly one timer, for the engine's next wake-up. A replaced timer is cancelled, and a tick from any
    /// generation but the current one is ignored, so a late tick never starts a second timer.
    private func armTimer(_ run: inout Run) {
        guard let next = run.engine.nextWakeUp else {
            run.timer?.task.cancel()
            run.timer = nil
            return
        }
        if let current = run.timer, current.at == next { return }
        run.timer?.task.cancel()
        run.timerGeneration &+= 1
        let generation = run.timerGeneration
        let inbox = run.inbox
        let task = Task { [clock] in
            do {
                try await clock.sleep(until: next)
                _ = inbox.send(.tick(generation: generation))
            } catch {
                // Replaced or stopped: nothing to post.
            }
        }
        run.timer = (next, generation, task)
    }

    /// Decided: every load still running is cancelled (the engine has already counted it as cancelled or timed out)
    /// and the inbox is closed. An answer already posted is read now; a load that answers later reads the closed inbox
    /// and handles its own answer (``lateAnswer(_:slot:network:cancelledAt:)``). Either way a late fill is settled
    /// lost and invalidated, never delivered, and the caller does not wait for it.
    private func finishInBackground(_ run: inout Run) {
        // The decision's instant.
        let now = run.engine.finishedAt ?? clock.now
        var running = Set<Int>()
        for (slot, entry) in run.running.enumerated() {
            guard let entry else { continue }
            entry.task?.cancel()
            running.insert(slot)
        }
        // Counted before the inbox closes: a load that answers right after the close counts itself out, never before
        // it was counted in.
        if !running.isEmpty { backgroundLoads.add(running.count) }
        // Answers not read yet: those left in their cells, then those posted.
        while let ready = run.nextReady() {
            Self.refuseLate(ready.result)
            if running.contains(ready.slot) { backgroundLoads.done() }
        }
        for case .answer(let slot, let result) in run.inbox.close(at: now) {
            Self.refuseLate(result)
            if running.contains(slot) { backgroundLoads.done() }
        }
    }

    /// A load answered after its request was decided (its inbox closed at `cancelledAt`): a fill is settled lost and
    /// invalidated; an answer later than ``cancellationGrace`` after the cancellation is logged and counted (the
    /// network ignored it).
    func lateAnswer(
        _ result: Result<AdLoadResult, AdError>, slot: Int, network: String, placement: String,
        cancelledAt: AdInstant
    ) {
        Self.refuseLate(result)
        let overdue = clock.now - cancelledAt
        if overdue > Self.cancellationGrace {
            logger.warning(
                "a cancelled load answered late: the network ignored cancellation",
                metadata: [
                    "network": "\(network)", "placement": "\(placement)", "after_ms": "\(Int(overdue.milliseconds))",
                ])
            metrics.counter("admediation_late_cancelled_loads_total", [("network", network)]).increment()
        }
        backgroundLoads.done()
    }

    /// The engine's rule for an answer after its slot was settled: a fill is settled lost (reason 1) and invalidated.
    static func refuseLate(_ result: Result<AdLoadResult, AdError>) {
        guard case .success(.filled(let ad)) = result else { return }
        ad.settleAuction(.lost(reason: .internalError, winningPrice: nil))
        ad.invalidate()
    }

    /// How long a cancelled load may take to answer before it counts as ignoring cancellation (the kit's rule).
    static let cancellationGrace: Duration = .milliseconds(100)

    /// Executes the actions of a step that starts nothing (a request cancelled before it began, a late answer).
    static func perform(_ actions: [DecisionEngine.Action]) {
        for action in actions {
            switch action {
            case .settle(let ad, let result): ad.settleAuction(result)
            case .invalidate(let ad): ad.invalidate()
            case .start, .cancel, .breaker, .finish: continue
            }
        }
    }
}

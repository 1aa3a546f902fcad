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

    /// The driver's side of one request: the engine, and per running slot its load's task and how its breaker
    /// admitted it; the one timer.
    struct Run {
        var engine: DecisionEngine
        let request: AdRequest
        let format: AdFormat
        let tracer: (any Tracer)?
        let inbox = Inbox()
        var running: [(task: Task<Void, Never>, admission: CircuitBreaker.Admission)?]
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

        init(engine: consuming DecisionEngine, plan: PlacementPlan, request: AdRequest, tracer: (any Tracer)?) {
            self.engine = engine
            self.request = request
            self.privacy = request.privacy == PrivacySignals() ? nil : DecodedPrivacy(request.privacy)
            self.routes = plan.routes
            self.format = plan.placement.format
            self.tracer = tracer
            running = Array(repeating: nil, count: engine.slots.count)
            actions.reserveCapacity(2 * engine.slots.count + 2)
        }
    }

    /// Runs `engine` until it decides, and returns it decided: the caller has its answer at the decision, whatever
    /// the lines still running do.
    ///
    /// Every bidder and line load is a task of its own that inherits the caller's priority and task-local values (the
    /// trace context reaches the adapters and their transport) and posts its answer to the request's inbox; the one
    /// timer does the same. The caller's cancellation is posted too, and the engine cancels every load. Loads the
    /// engine gives up on (a timeout, a fill above them, the decision) are cancelled by their task; once decided, the
    /// inbox closes and those still running are counted in ``BackgroundLoads``: each settles lost and invalidates its
    /// own late fill when it returns, so an adapter that ignores cancellation never holds the caller.
    ///
    /// A load starts as an immediate task: it runs on the caller's thread until it first suspends, so one that
    /// answers without suspending costs no thread hand-off. The timer is only started before the loop really waits.
    nonisolated(nonsending) func run(
        _ engine: consuming DecisionEngine, plan: PlacementPlan, request: AdRequest, tracer: (any Tracer)?
    ) async -> DecisionEngine {
        // Moved, not copied: a copy would share the engine's arrays and copy them on its first step.
        var run = Run(engine: consume engine, plan: plan, request: request, tracer: tracer)
        let inbox = run.inbox
        return await withTaskCancellationHandler {
            let begin = clock.now
            step(&run) { $0.begin(at: begin, into: &$1) }
            while !run.engine.isFinished {
                // An answer already posted is read without suspending; otherwise the loop may wait, and only then
                // needs the timer.
                if let ready = inbox.poll() {
                    handle(ready, &run)
                } else {
                    armTimer(&run)
                    handle(await inbox.next(), &run)
                }
            }
            run.timer?.task.cancel()
            finishInBackground(&run)
            return run.engine
        } onCancel: {
            _ = inbox.send(.callerCancelled)
        }
    }

    /// Feeds one input to the engine. The caller's cancellation is seen before a line's answer read with it, so it
    /// reaches every line at once and that answer is handled as late; a bid already in hand still counts.
    private func handle(_ input: Input, _ run: inout Run) {
        let now = clock.now
        let isBid = Self.isBidInHand(input, bidders: run.engine.bidderCount)
        if !isBid { noticeCancellation(&run, at: now) }
        switch input {
        case .answer(let slot, let result):
            step(&run) { $0.answer(slot, result, at: now, into: &$1) }
            run.running[slot] = nil
        case .tick(let generation):
            guard generation == run.timer?.generation else { break }
            run.timer = nil
            step(&run) { $0.advance(to: now, into: &$1) }
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
        step(&run) { $0.callerCancelled(at: now, into: &$1) }
    }

    /// Runs one step of the engine and executes its actions, and those of slots skipped on the way (breaker open),
    /// in the one buffer.
    private func step(_ run: inout Run, _ body: (inout DecisionEngine, inout [DecisionEngine.Action]) -> Void) {
        run.actions.removeAll(keepingCapacity: true)
        body(&run.engine, &run.actions)
        var next = 0
        while next < run.actions.count {
            let action = run.actions[next]
            next += 1
            switch action {
            case .start(let slot):
                start(slot, &run)
            case .cancel(let slot):
                run.running[slot]?.task.cancel()
            case .settle(let ad, let result):
                ad.settleAuction(result.disclosing(run.request.lossNotices))
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
    }

    /// Starts slot `slot` if its network's breaker admits it (else the engine skips it): the caller's request for the
    /// slot's placement and floor, with the slot's time left, as an immediate task posting to the inbox.
    private func start(_ slot: Int, _ run: inout Run) {
        let spec = run.engine.slots[slot]
        // Read per slot: a slot started just before may have run for a while.
        let now = clock.now
        // Privacy first: a network the rules forbid is never asked (and never counts for its breaker). The gate
        // restricts the request to what the rules allow the network.
        guard let route = run.routes[slot] else {
            return run.engine.skip(slot, reason: .notReached, at: now, into: &run.actions)
        }
        var request = run.request
        let verdict =
            run.privacy.map { PrivacyRules.verdict($0, tcfVendorID: route.tcfVendorID) } ?? route.unsignalledVerdict
        guard verdict.mayBeAsked else {
            return run.engine.skip(slot, reason: .privacyBlocked, at: now, into: &run.actions)
        }
        PrivacyConfiguration.restrict(&request, to: verdict)
        let admission = route.breaker?.withLock { $0.admit(at: now) } ?? .allowed
        if admission == .probe { breakerChanged(spec.network, to: .halfOpen(probing: true)) }
        guard admission != .rejected else {
            return run.engine.skip(slot, reason: .breakerOpen, at: now, into: &run.actions)
        }
        let network = route.network
        request.placement = spec.placement
        request.format = run.format
        request.timeout = min(spec.timeout, run.engine.deadline - now)
        request.floorEcpm = spec.floor
        // Bidders hear how the placement clears; a waterfall line takes part in no auction of this mediator's.
        request.auction = slot < run.engine.bidderCount ? run.engine.auction : nil
        // Only a mediator running as this line is nested (its winner is this decision's to settle); anything else
        // the line's adapter runs, even a mediator in a task of its own, decides for itself. The load's task inherits
        // the caller's task-local values, so the depth is rebound only when it differs from the caller's.
        let nested = route.isMediator ? run.lineDepth : 0
        let line = Line(
            mediator: self, slot: slot, network: network, request: request, tracer: run.tracer, inbox: run.inbox,
            depth: nested == run.lineDepth - 1 ? nil : nested)
        let task: Task<Void, Never>
        if #available(macOS 26.0, iOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, *) {
            task = Task.immediate { await line.run() }
        } else {
            task = Task { await line.run() }
        }
        run.running[slot] = (task, admission)
    }

    /// One line's load, as its task runs it: posts the answer to the request's inbox, or, when the request was decided
    /// meanwhile (the inbox closed), handles it as late.
    private struct Line: Sendable {
        let mediator: Mediator
        let slot: Int
        let network: any AdNetwork
        let request: AdRequest
        let tracer: (any Tracer)?
        let inbox: Inbox
        /// The nesting depth to run the load at, when it is not the caller's.
        let depth: Int?

        func run() async {
            let result: Result<AdLoadResult, AdError>
            if let depth {
                result = await MediationNesting.$depth.withValue(depth) {
                    await Mediator.tracedLoad(request, from: network, tracer: tracer)
                }
            } else {
                result = await Mediator.tracedLoad(request, from: network, tracer: tracer)
            }
            if let decidedAt = inbox.send(.answer(slot, result)) {
                mediator.lateAnswer(
                    result, slot: slot, network: network.id, placement: request.placement, cancelledAt: decidedAt)
            }
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
        let now = clock.now
        var running = Set<Int>()
        for (slot, entry) in run.running.enumerated() {
            guard let entry else { continue }
            entry.task.cancel()
            running.insert(slot)
        }
        // Counted before the inbox closes: a load that answers right after the close counts itself out, never before
        // it was counted in.
        if !running.isEmpty { backgroundLoads.add(running.count) }
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

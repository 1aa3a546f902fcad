import Tracing

/// The thin driver: runs a ``DecisionEngine`` over one task group and executes its actions.
extension Mediator {
    enum Input: Sendable {
        /// Slot `i` answered.
        case answer(Int, Result<AdLoadResult, AdError>)
        /// The timer of generation `generation` reached its instant.
        case tick(generation: UInt64)
        /// A timer that was replaced or stopped ended without ticking.
        case timerStopped
        /// The calling task was cancelled.
        case callerCancelled
        /// The cancellation watcher ended because the request was decided.
        case watcherStopped
    }

    /// The driver's side of one request: the engine, and per running slot how to cancel it and how its breaker
    /// admitted it; the one timer; the caller's cancellation watcher.
    struct Run {
        var engine: DecisionEngine
        let request: AdRequest
        let format: AdFormat
        let tracer: (any Tracer)?
        var running: [(cancellation: ChildCancellation, admission: CircuitBreaker.Admission)?]
        var timer: (at: AdInstant, generation: UInt64, cancellation: ChildCancellation)?
        var timerGeneration: UInt64 = 0
        var callerCancelled = false
        var watcher: Latch?
        /// Answers finished but not yet read: a slot's child counts its answer before it returns.
        let ready = AnswerCount()
        var answersRead = 0
        /// One buffer for the actions of every step.
        var actions: [DecisionEngine.Action] = []
        /// The request's privacy signals, decoded once for every slot's verdict.
        let privacy: DecodedPrivacy

        init(engine: DecisionEngine, request: AdRequest, format: AdFormat, tracer: (any Tracer)?) {
            self.engine = engine
            self.request = request
            self.privacy = DecodedPrivacy(request.privacy)
            self.format = format
            self.tracer = tracer
            running = Array(repeating: nil, count: engine.slots.count)
            actions.reserveCapacity(2 * engine.slots.count + 2)
        }
    }

    /// Runs `engine` until it decides. Every bidder and line load, the one timer for the next deadline and a watcher
    /// for the caller's cancellation are child tasks of the caller (one task group), so priority and task-local values
    /// flow into the adapters and the caller's cancellation reaches every load. A load the engine gives up on is
    /// cancelled through its own ``ChildCancellation``; the group then waits for it to return, which a conforming
    /// adapter does within 100 ms (the kit's rule), and its late answer goes to the engine (which invalidates it).
    ///
    /// Loads start as immediate child tasks: each runs on the caller's thread until it first suspends, so one that
    /// answers without suspending costs no thread hand-off. The timer and the watcher are only started before the loop
    /// really waits (no answer is ready), so a request whose loads all answer at once starts neither.
    func run(
        _ engine: DecisionEngine, request: AdRequest, format: AdFormat, tracer: (any Tracer)?
    ) async -> DecisionEngine {
        await withTaskGroup(of: Input.self, returning: DecisionEngine.self) { group in
            var run = Run(engine: engine, request: request, format: format, tracer: tracer)
            let begin = clock.now
            step(&run, &group) { $0.begin(at: begin, into: &$1) }
            while !run.engine.isFinished {
                // An answer already counted is read without suspending; otherwise the loop may wait, and only then
                // needs the timer and the watcher.
                if run.ready.value <= run.answersRead { prepareToWait(&run, &group) }
                guard let input = await group.next() else { break }
                handle(input, &run, &group)
            }
            // Decided: stop the timer, the watcher and any load still running, then wait for them; their late
            // answers go to the engine, which invalidates (and settles lost) every fill nobody will read.
            run.timer?.cancellation.cancel()
            run.watcher?.fire()
            for entry in run.running { entry?.cancellation.cancel() }
            while let input = await group.next() {
                guard case .answer(let slot, let result) = input else { continue }
                let now = clock.now
                step(&run, &group) { $0.answer(slot, result, at: now, into: &$1) }
            }
            return run.engine
        }
    }

    /// Feeds one input to the engine. The caller's cancellation is seen before a line's answer read with it, so it
    /// reaches every line at once and that answer is handled as late; a bid already in hand still counts.
    private func handle(_ input: Input, _ run: inout Run, _ group: inout TaskGroup<Input>) {
        let now = clock.now
        let isBid = Self.isBidInHand(input, bidders: run.engine.bidderCount)
        if !isBid { noticeCancellation(&run, &group, at: now) }
        switch input {
        case .answer(let slot, let result):
            run.answersRead += 1
            step(&run, &group) { $0.answer(slot, result, at: now, into: &$1) }
            run.running[slot] = nil
        case .tick(let generation):
            guard generation == run.timer?.generation else { break }
            run.timer = nil
            step(&run, &group) { $0.advance(to: now, into: &$1) }
        case .callerCancelled, .timerStopped, .watcherStopped:
            break
        }
        if isBid { noticeCancellation(&run, &group, at: now) }
    }

    /// A bidder's own answer (not a cancelled load, the cancellation's effect): it counts even when read together with
    /// the caller's cancellation.
    private static func isBidInHand(_ input: Input, bidders: Int) -> Bool {
        guard case .answer(let slot, let result) = input, slot < bidders else { return false }
        if case .failure(let error) = result, error.code == .cancelled { return false }
        return true
    }

    /// Once, when the calling task is cancelled: the engine cancels everything running.
    private func noticeCancellation(_ run: inout Run, _ group: inout TaskGroup<Input>, at now: AdInstant) {
        guard !run.callerCancelled, Task.isCancelled else { return }
        run.callerCancelled = true
        step(&run, &group) { $0.callerCancelled(at: now, into: &$1) }
    }

    /// Runs one step of the engine and executes its actions, and those of slots skipped on the way (breaker open),
    /// in the one buffer.
    private func step(
        _ run: inout Run, _ group: inout TaskGroup<Input>,
        _ body: (inout DecisionEngine, inout [DecisionEngine.Action]) -> Void
    ) {
        run.actions.removeAll(keepingCapacity: true)
        body(&run.engine, &run.actions)
        var next = 0
        while next < run.actions.count {
            let action = run.actions[next]
            next += 1
            switch action {
            case .start(let slot):
                start(slot, &run, &group)
            case .cancel(let slot):
                run.running[slot]?.cancellation.cancel()
            case .settle(let ad, let result):
                ad.settleAuction(result)
            case .invalidate(let ad):
                ad.invalidate()
            case .breaker(let slot, let event):
                recordBreaker(run.engine.slots[slot].network, probe: run.running[slot]?.admission == .probe, event)
            case .finish:
                break
            }
        }
    }

    /// Starts slot `slot` if its network's breaker admits it (else the engine skips it): the caller's request for the
    /// slot's placement and floor, with the slot's time left, as an immediate child task.
    private func start(_ slot: Int, _ run: inout Run, _ group: inout TaskGroup<Input>) {
        let spec = run.engine.slots[slot]
        // Read per slot: a slot started just before may have run for a while.
        let now = clock.now
        // Privacy first: a network the rules forbid is never asked (and never counts for its breaker).
        let verdict = privacyVerdict(run.privacy, network: spec.network)
        guard verdict.mayBeAsked else {
            return run.engine.skip(slot, reason: .privacyBlocked, at: now, into: &run.actions)
        }
        let admission = breakers[spec.network]?.withLock { $0.admit(at: now) } ?? .allowed
        if admission == .probe { breakerChanged(spec.network, to: .halfOpen(probing: true)) }
        guard admission != .rejected, let network = networks[spec.network] else {
            let reason: SkipReason = admission == .rejected ? .breakerOpen : .notReached
            run.engine.skip(slot, reason: reason, at: now, into: &run.actions)
            return
        }
        var request = run.request
        request.placement = spec.placement
        request.format = run.format
        request.timeout = min(spec.timeout, run.engine.deadline - now)
        request.floorEcpm = spec.floor
        Self.restrict(&request, by: verdict)
        let sent = request
        let cancellation = ChildCancellation()
        run.running[slot] = (cancellation, admission)
        let (ready, tracer) = (run.ready, run.tracer)
        group.addImmediateTask {
            let result = await cancellation.run { await Self.tracedLoad(sent, from: network, tracer: tracer) }
            ready.add()
            return .answer(slot, result)
        }
    }

    /// Before a wait that may suspend: the timer for the engine's next wake-up, and the watcher once.
    private func prepareToWait(_ run: inout Run, _ group: inout TaskGroup<Input>) {
        armTimer(&run, &group)
        guard run.watcher == nil else { return }
        let latch = Latch()
        run.watcher = latch
        group.addImmediateTask {
            await latch.wait()
            return Task.isCancelled ? .callerCancelled : .watcherStopped
        }
    }

    /// Keeps exactly one timer, for the engine's next wake-up. A replaced timer is cancelled, and a tick from any
    /// generation but the current one is ignored, so a late tick never starts a second timer.
    private func armTimer(_ run: inout Run, _ group: inout TaskGroup<Input>) {
        guard let next = run.engine.nextWakeUp else {
            run.timer?.cancellation.cancel()
            run.timer = nil
            return
        }
        if let current = run.timer, current.at == next { return }
        run.timer?.cancellation.cancel()
        run.timerGeneration &+= 1
        let generation = run.timerGeneration
        let cancellation = ChildCancellation()
        run.timer = (next, generation, cancellation)
        group.addTask { [clock] in
            await cancellation.run {
                do {
                    try await clock.sleep(until: next)
                    return .tick(generation: generation)
                } catch {
                    return .timerStopped
                }
            }
        }
    }

    /// Executes the actions of a step that starts nothing (a request cancelled before it began).
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

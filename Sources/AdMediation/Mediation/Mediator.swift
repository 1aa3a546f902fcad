import Synchronization

/// A waterfall over other networks, and itself an ``AdNetwork``: waterfalls nest, and anything that takes a
/// network takes a mediator.
///
/// For each mediated placement it asks the configured lines (sequentially, or in parallel with priority kept),
/// applies floors, expiry, frequency caps, pacing and a circuit breaker per network, and returns the winning ad
/// together with a ``MediationTrace`` of every line. The returned ad keeps the winning network's id; reporting its
/// impression counts toward the placement's cap and pacing.
public final class Mediator: AdNetwork {
    /// The mediator's id, usable as a line's network in an outer mediator.
    public let id: String
    /// The formats of the configured placements.
    public let capabilities: AdNetworkCapabilities
    private let networks: [String: any AdNetwork]
    private let configuration: MediationConfiguration
    private let clock: any AdClock
    private let shared: Mutex<SharedState>

    private struct SharedState {
        var breakers: [String: CircuitBreaker] = [:]
        var pacing: [String: PlacementPacing] = [:]
    }

    /// Creates a mediator after validating `configuration` against `networks` (by id). Throws
    /// ``AdError/Code/configuration`` naming the field at fault.
    public init(
        id: String = "mediator",
        networks: [any AdNetwork],
        configuration: MediationConfiguration,
        clock: any AdClock = SystemAdClock()
    ) throws(AdError) {
        var byID: [String: any AdNetwork] = [:]
        for network in networks {
            if byID[network.id] != nil { throw AdError(.configuration, "networks: two networks share the id \"\(network.id)\"") }
            byID[network.id] = network
        }
        try configuration.validate(networks: byID.mapValues { $0.capabilities.formats })
        self.id = id
        self.networks = byID
        self.configuration = configuration
        self.clock = clock
        self.capabilities = AdNetworkCapabilities(
            formats: Set(configuration.placements.values.map(\.format)),
            loadsWhileShowing: true,
            reportsPrice: byID.values.contains { $0.capabilities.reportsPrice })
        var state = SharedState()
        for networkID in byID.keys {
            state.breakers[networkID] = CircuitBreaker(
                threshold: configuration.circuitBreaker.failureThreshold,
                coolDown: OutsideValue.duration(seconds: configuration.circuitBreaker.coolDownS) ?? .seconds(30))
        }
        self.shared = Mutex(state)
    }

    /// The breaker state of a network, for diagnostics.
    public func breakerState(of networkID: String) -> CircuitBreaker.State? {
        shared.withLock { $0.breakers[networkID]?.state }
    }

    /// Loads the mediated placement `request.placement`. See ``loadWithTrace(_:)`` for the trace.
    public func load(_ request: AdRequest) async throws -> AdLoadResult {
        try await loadWithTrace(request).result.get()
    }

    /// Loads the mediated placement `request.placement` and returns the result with its trace. Fails with
    /// ``AdError/Code/configuration`` for an unknown placement or a format that does not match it, and
    /// ``AdError/Code/cancelled`` when the calling task is cancelled (every line is cancelled too).
    public func loadWithTrace(_ request: AdRequest) async -> MediationOutcome {
        let now = clock.now
        guard let placement = configuration.placements[request.placement] else {
            return MediationOutcome(
                result: .failure(AdError(.configuration, "unknown placement \"\(request.placement)\"")),
                trace: MediationTrace(placement: request.placement, lines: [], winnerIndex: nil, duration: .zero))
        }
        let format = placement.adFormat ?? request.format
        let lineIDs = placement.lines.map { (network: $0.network, placement: $0.placement) }
        if format.name != request.format.name {
            return MediationOutcome(
                result: .failure(AdError(.configuration, "placement \"\(request.placement)\" serves \(format), not \(request.format)")),
                trace: MediationTrace(placement: request.placement, lines: [], winnerIndex: nil, duration: .zero))
        }

        // Frequency cap and pacing: every line is skipped, and the answer is no fill.
        let window = OutsideValue.duration(seconds: placement.frequencyWindowS) ?? .seconds(3600)
        let minInterval = placement.minIntervalS.flatMap { OutsideValue.duration(seconds: $0) }
        if let reason = shared.withLock({ $0.pacing[request.placement, default: .init()].block(at: now, cap: placement.frequencyCap, window: window, minInterval: minInterval) }) {
            let lines = lineIDs.map { LineTrace(network: $0.network, placement: $0.placement, outcome: .skipped(reason), latency: nil, ecpm: nil) }
            return MediationOutcome(
                result: .success(.noFill(NoFill(reason: reason.rawValue))),
                trace: MediationTrace(placement: request.placement, lines: lines, winnerIndex: nil, duration: .zero))
        }

        var deadline = now + .milliseconds(min(max(placement.deadlineMs, 1), Limits.maxMilliseconds))
        if let timeout = request.timeout { deadline = min(deadline, now + timeout) }
        var machine = WaterfallStateMachine(
            lines: placement.lines.map { .init(floor: $0.floorEcpm, timeout: $0.timeout) },
            maxInFlight: placement.mode == .sequential ? 1 : placement.maxInFlight,
            startedAt: now,
            deadline: deadline)
        let cancelled = await drive(&machine, request: request, format: format, placement: placement, deadline: deadline)
        let end = clock.now
        let trace = machine.trace(placement: request.placement, lines: lineIDs, at: end)
        if cancelled {
            return MediationOutcome(result: .failure(AdError(.cancelled, "the request for \(request.placement) was cancelled")), trace: trace)
        }
        guard let ad = machine.winner else {
            if end >= deadline {
                let ms = Int((deadline - now).milliseconds)
                return MediationOutcome(result: .failure(AdError(.timeout, "no line of \(request.placement) filled within the \(ms) ms deadline")), trace: trace)
            }
            return MediationOutcome(result: .success(.noFill(NoFill(reason: "waterfall exhausted"))), trace: trace)
        }
        let wrapped = LoadedAd(
            networkID: ad.networkID,
            placement: request.placement,
            format: ad.format,
            creative: ad.creative,
            ecpm: ad.ecpm,
            loadedAt: ad.loadedAt,
            expiresAt: ad.expiresAt,
            adapterData: ad.adapterData,
            reporter: MediatedAdReporter(inner: ad, onImpression: { [self] in
                let at = clock.now
                shared.withLock { $0.pacing[request.placement, default: .init()].record(at, window: window) }
            }))
        return MediationOutcome(result: .success(.filled(wrapped)), trace: trace)
    }

    private enum Input: Sendable {
        case answer(Int, Result<AdLoadResult, AdError>)
        case tick
        case callerCancelled
    }

    /// Runs `machine` until it finishes: starts line loads, keeps one timer for the next deadline, feeds answers
    /// back, and invalidates every fill that is not delivered. Returns true when the caller cancelled.
    private func drive(
        _ machine: inout WaterfallStateMachine,
        request: AdRequest,
        format: AdFormat,
        placement: PlacementConfiguration,
        deadline: AdInstant
    ) async -> Bool {
        let (inputs, feed) = AsyncStream<Input>.makeStream()
        // The loop runs in its own task: iterating an AsyncStream ends early when the iterating task is cancelled,
        // and the caller's cancellation must instead arrive as an input so every line is cancelled and accounted.
        let loop = Task.detached { [self, machine] in
            await runLoop(machine, inputs: inputs, feed: feed, request: request, format: format, placement: placement, deadline: deadline)
        }
        let (final, cancelled) = await withTaskCancellationHandler {
            await loop.value
        } onCancel: {
            feed.yield(.callerCancelled)
        }
        machine = final
        return cancelled
    }

    private func runLoop(
        _ initial: WaterfallStateMachine,
        inputs: AsyncStream<Input>,
        feed: AsyncStream<Input>.Continuation,
        request: AdRequest,
        format: AdFormat,
        placement: PlacementConfiguration,
        deadline: AdInstant
    ) async -> (WaterfallStateMachine, Bool) {
        var machine = initial
        var loads: [Int: Task<Void, Never>] = [:]
        var timer: (at: AdInstant, task: Task<Void, Never>)?
        var callerCancelled = false

        func perform(_ actions: [WaterfallStateMachine.Action]) {
            var queue = actions[...]
            while let action = queue.popFirst() {
                switch action {
                case .start(let index):
                    let line = placement.lines[index]
                    let admission = shared.withLock { $0.breakers[line.network]?.admit(at: clock.now) ?? .allowed }
                    if admission == .rejected {
                        queue.append(contentsOf: machine.skip(index, reason: .breakerOpen, at: clock.now))
                        continue
                    }
                    guard let network = networks[line.network] else { continue }
                    var lineRequest = request
                    lineRequest.placement = line.placement
                    lineRequest.format = format
                    lineRequest.timeout = min(line.timeout, deadline - clock.now)
                    loads[index] = Task.detached {
                        let result: Result<AdLoadResult, AdError>
                        do {
                            result = .success(try await network.load(lineRequest))
                        } catch let error as AdError {
                            result = .failure(error)
                        } catch is CancellationError {
                            result = .failure(AdError(.cancelled, "cancelled"))
                        } catch {
                            result = .failure(AdError(.network, "\(error)"))
                        }
                        // An answer nobody will read is dropped, and its ad invalidated.
                        if case .terminated = feed.yield(.answer(index, result)), case .success(.filled(let ad)) = result {
                            ad.invalidate()
                        }
                    }
                case .cancel(let index):
                    loads[index]?.cancel()
                case .invalidate(let ad):
                    ad.invalidate()
                case .breaker(let index, let event):
                    let networkID = placement.lines[index].network
                    let now = clock.now
                    shared.withLock { state in
                        switch event {
                        case .success: state.breakers[networkID]?.recordSuccess()
                        case .failure: state.breakers[networkID]?.recordFailure(at: now)
                        case .abandoned: state.breakers[networkID]?.recordAbandoned()
                        }
                    }
                case .finish:
                    break
                }
            }
        }

        func armTimer() {
            guard let next = machine.nextWakeUp else {
                timer?.task.cancel()
                timer = nil
                return
            }
            if let current = timer, current.at == next { return }
            timer?.task.cancel()
            timer = (next, Task.detached { [clock] in
                do {
                    try await clock.sleep(until: next)
                    feed.yield(.tick)
                } catch {}
            })
        }

        perform(machine.begin(at: clock.now))
        armTimer()
        if !machine.isFinished {
            for await input in inputs {
                let now = clock.now
                switch input {
                case .answer(let index, let result):
                    perform(machine.answer(index, result, at: now))
                case .tick:
                    timer = nil
                    perform(machine.advance(to: now))
                case .callerCancelled:
                    callerCancelled = true
                    perform(machine.cancelAll(at: now))
                }
                if machine.isFinished { break }
                armTimer()
            }
        }
        timer?.task.cancel()
        feed.finish()
        // Answers that were queued but not read: drop and invalidate.
        for await input in inputs {
            if case .answer(_, .success(.filled(let ad))) = input { ad.invalidate() }
        }
        return (machine, callerCancelled)
    }
}

/// Forwards a mediated ad's events to the winning network's ad and counts impressions for caps and pacing.
private struct MediatedAdReporter: AdEventReporter {
    let inner: LoadedAd
    let onImpression: @Sendable () -> Void

    func report(_ event: AdEvent, for ad: LoadedAd) async throws {
        try await inner.report(event)
        if event == .impression { onImpression() }
    }

    func invalidated(_ ad: LoadedAd) {
        inner.invalidate()
    }
}

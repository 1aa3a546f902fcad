import CoreMetrics
import Foundation
import Logging
import Synchronization
import Tracing

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
    let networks: [String: any AdNetwork]
    let configuration: MediationConfiguration
    let clock: any AdClock
    /// Each network's breaker and each placement's pacing behind its own lock, so concurrent decisions contend only
    /// when they touch the same network or placement; the tables themselves never change after `init`.
    let breakers: [String: Guarded<CircuitBreaker>]
    let pacing: [String: Guarded<PlacementPacing>]
    /// The self-ordering waterfalls' statistics, by placement (or placement and arm).
    let optimizers: Mutex<[String: WaterfallOptimizer]>
    let logger: Logger
    let metrics: MetricHandles
    let tracer: (any Tracer)?

    /// Creates a mediator after validating `configuration` against `networks` (by id). Throws
    /// ``AdError/Code/configuration`` naming the field at fault.
    public init(
        id: String = "mediator",
        networks: [any AdNetwork],
        configuration: MediationConfiguration,
        clock: any AdClock = SystemAdClock(),
        logger: Logger = Logger(label: "admediation.mediator"),
        metrics: any MetricsFactory = MetricsSystem.factory,
        tracer: (any Tracer)? = nil
    ) throws(AdError) {
        var byID: [String: any AdNetwork] = [:]
        for network in networks {
            if byID[network.id] != nil {
                throw AdError(.configuration, "networks: two networks share the id \"\(network.id)\"")
            }
            byID[network.id] = network
        }
        try configuration.validate(networks: byID.mapValues { $0.capabilities.formats })
        self.id = id
        self.networks = byID
        self.configuration = configuration
        self.clock = clock
        self.logger = logger
        self.metrics = MetricHandles(factory: metrics)
        self.tracer = tracer
        self.capabilities = AdNetworkCapabilities(
            formats: Set(configuration.placements.values.map(\.format.kind)),
            reportsPrice: byID.values.contains { $0.capabilities.reportsPrice })
        self.breakers = byID.mapValues { _ in
            Guarded(
                CircuitBreaker(
                    threshold: configuration.circuitBreaker.failureThreshold,
                    coolDown: configuration.circuitBreaker.coolDown))
        }
        self.pacing = configuration.placements.mapValues { _ in Guarded(PlacementPacing()) }
        var optimizers: [String: WaterfallOptimizer] = [:]
        for (placementID, placement) in configuration.placements {
            if let optimizer = placement.optimizer, placement.arms.isEmpty {
                optimizers[placementID] = WaterfallOptimizer(
                    configuration: optimizer, seed: UInt64.random(in: 0...UInt64.max))
            }
            for arm in placement.arms {
                if let optimizer = placement.variant(arm).optimizer {
                    optimizers["\(placementID)#\(arm.label)"] = WaterfallOptimizer(
                        configuration: optimizer, seed: UInt64.random(in: 0...UInt64.max))
                }
            }
        }
        self.optimizers = Mutex(optimizers)
    }

    /// The breaker state of a network, for diagnostics.
    public func breakerState(of networkID: String) -> CircuitBreaker.State? {
        breakers[networkID]?.withLock { $0.state }
    }

    /// How many impressions of `placement` the pacing keeps (for the bound's tests).
    func pacedImpressionCount(of placement: String) -> Int {
        pacing[placement]?.withLock { $0.impressions.count } ?? 0
    }

    /// Loads the mediated placement `request.placement`. See ``loadWithTrace(_:)`` for the trace.
    public func load(_ request: AdRequest) async throws -> AdLoadResult {
        try await loadWithTrace(request).result.get()
    }

    /// Loads the mediated placement `placement` in the format it is configured with. See ``loadWithTrace(_:)``.
    public func load(
        _ placement: String, userID: String? = nil, privacy: PrivacySignals = PrivacySignals()
    ) async throws -> AdLoadResult {
        try await loadWithTrace(request(for: placement, userID: userID, privacy: privacy)).result.get()
    }

    /// The request for the configured `placement` in its own format (a placement not configured gets a request that
    /// fails with ``AdError/Code/configuration``, naming it).
    public func request(
        for placement: String, userID: String? = nil, privacy: PrivacySignals = PrivacySignals()
    ) -> AdRequest {
        AdRequest(
            placement: placement, format: configuration.placements[placement]?.format ?? .native, userID: userID,
            privacy: privacy)
    }

    /// Loads the mediated placement `request.placement` and returns the result with its trace. Fails with
    /// ``AdError/Code/configuration`` for an unknown placement or a format that does not match it, and
    /// ``AdError/Code/cancelled`` when the calling task is cancelled (every line is cancelled too).
    public func loadWithTrace(_ request: AdRequest) async -> MediationOutcome {
        let tracer = self.tracer ?? InstrumentationSystem.tracer
        let outcome: MediationOutcome
        if tracer is NoOpTracer {
            // Nothing would be recorded: no span, no task-local context to bind.
            outcome = await decide(request, tracer: nil)
        } else {
            outcome = await tracer.withSpan("mediation", ofKind: .internal) { span in
                let outcome = await decide(request, tracer: tracer)
                Self.describe(outcome, placement: request.placement, on: span)
                return outcome
            }
        }
        observe(outcome, placement: request.placement)
        return outcome
    }

    /// Decides `request`; `tracer` is nil when spans would record nothing.
    private func decide(_ request: AdRequest, tracer: (any Tracer)?) async -> MediationOutcome {
        let now = clock.now
        guard let configured = configuration.placements[request.placement] else {
            return MediationOutcome(
                result: .failure(AdError(.configuration, "unknown placement \"\(request.placement)\"")),
                trace: MediationTrace(placement: request.placement, lines: [], winnerIndex: nil, duration: .zero))
        }
        let (placement, optimizerKey) = Self.arm(of: configured, id: request.placement, userID: request.userID)
        let format = placement.format
        if format.kind != request.format.kind {
            return MediationOutcome(
                result: .failure(
                    AdError(
                        .configuration, "placement \"\(request.placement)\" serves \(format), not \(request.format)")),
                trace: MediationTrace(placement: request.placement, lines: [], winnerIndex: nil, duration: .zero))
        }

        // Frequency cap and pacing: every line is skipped, and the answer is no fill.
        let window = placement.frequencyWindow
        let minInterval = placement.minInterval
        if let reason = pacing[request.placement]?.withLock({
            $0.block(at: now, cap: placement.frequencyCap, window: window, minInterval: minInterval)
        }) {
            let lines = placement.lines.map {
                LineTrace(
                    network: $0.network, placement: $0.placement, outcome: .skipped(reason), latency: nil, ecpm: nil)
            }
            return MediationOutcome(
                result: .success(.noFill(NoFill(reason: reason.rawValue))),
                trace: MediationTrace(
                    placement: request.placement, lines: lines, winnerIndex: nil, duration: .zero,
                    abLabel: placement.abLabel))
        }

        var deadline = now + min(max(placement.deadline, .milliseconds(1)), .milliseconds(Limits.maxMilliseconds))
        if let timeout = request.timeout { deadline = min(deadline, now + timeout) }

        // 1. Bids, collected in parallel; the best valid one sets the price a line must beat.
        var bids: [BidTrace] = []
        var valid: [(index: Int, ad: LoadedAd, price: Double)] = []
        if !placement.bidders.isEmpty {
            let answers = await collectBids(
                request, format: format, placement: placement, deadline: deadline, tracer: tracer)
            (bids, valid) = Self.classify(answers, bidders: placement.bidders, at: clock.now)
            valid.sort { $0.price != $1.price ? $0.price > $1.price : $0.index < $1.index }
        }
        let bestBid = valid.first

        // 2. The waterfall: the optimizer's order (or the configured one), lines that cannot beat the best bid left
        // out.
        let order =
            placement.optimizer == nil
            ? Array(placement.lines.indices)
            : optimizers.withLock { $0[optimizerKey]?.order(placement.lines) } ?? Array(placement.lines.indices)
        // Without bids or an optimizer, every line in the configured order (the array itself, not a copy).
        let eligible = bestBid.map { bid in order.filter { Self.price(of: placement.lines[$0]) > bid.price } } ?? order
        let lines =
            placement.optimizer == nil && bestBid == nil ? placement.lines : eligible.map { placement.lines[$0] }
        var machine = WaterfallStateMachine(
            lines: lines.map { .init(floor: $0.floorEcpm, timeout: $0.timeout) },
            maxInFlight: placement.mode == .sequential ? 1 : placement.maxInFlight,
            startedAt: now,
            deadline: deadline)
        var cancelled = Task.isCancelled
        if !cancelled {
            cancelled = await drive(
                &machine, request: request, format: format, lines: lines, deadline: deadline, tracer: tracer)
        }
        let end = clock.now
        let tried = machine.trace(
            placement: request.placement, lines: lines.map { ($0.network, $0.placement) }, at: end)
        var traced = placement.lines.map {
            LineTrace(
                network: $0.network, placement: $0.placement, outcome: .skipped(bestBid == nil ? .notReached : .outbid),
                latency: nil, ecpm: nil)
        }
        for (position, index) in eligible.enumerated() { traced[index] = tried.lines[position] }
        var trace = MediationTrace(
            placement: request.placement, lines: traced, winnerIndex: nil, duration: tried.duration,
            abLabel: placement.abLabel, bids: bids,
            order: order)
        if placement.optimizer != nil {
            optimizers.withLock { $0[optimizerKey]?.observe(trace, lines: placement.lines) }
        }

        // 3. The highest price that filled wins.
        func settleBids(except winner: Int?, _ result: AuctionResult) {
            for bid in valid where bid.index != winner {
                bid.ad.settleAuction(result)
                bid.ad.invalidate()
                trace.bids[bid.index].auction = result
            }
        }
        if cancelled {
            machine.winner?.invalidate()
            settleBids(except: nil, .lost(reason: .internalError, winningPrice: nil))
            return MediationOutcome(
                result: .failure(AdError(.cancelled, "the request for \(request.placement) was cancelled")),
                trace: trace)
        }
        let lineWinner = machine.winner.flatMap { ad in tried.winnerIndex.map { (index: eligible[$0], ad: ad) } }
        let linePrice = lineWinner.map {
            $0.ad.ecpm ?? placement.lines[$0.index].ecpm ?? placement.lines[$0.index].floorEcpm ?? 0
        }
        if let bid = bestBid, linePrice.map({ bid.price > $0 }) ?? true {
            lineWinner?.ad.invalidate()
            let clearing = Self.clearingPrice(
                of: bid, among: valid, auction: placement.auction, floor: placement.bidders[bid.index].floorEcpm)
            bid.ad.settleAuction(.won(clearingPrice: clearing))
            trace.bids[bid.index].auction = .won(clearingPrice: clearing)
            trace.winningBid = bid.index
            settleBids(except: bid.index, .lost(reason: .lostToHigherBid, winningPrice: clearing))
            let bidder = placement.bidders[bid.index]
            let winning = WinningLine(
                index: bid.index, network: bidder.network, networkPlacement: bidder.placement,
                abLabel: placement.abLabel)
            return MediationOutcome(
                result: .success(
                    .filled(
                        wrap(
                            bid.ad, request: request, placement: placement, ecpm: clearing, precision: .exact,
                            winning: winning, isBid: true))),
                trace: trace)
        }
        guard let winner = lineWinner, let price = linePrice else {
            if end >= deadline {
                let ms = Int((deadline - now).milliseconds)
                return MediationOutcome(
                    result: .failure(
                        AdError(.timeout, "no line of \(request.placement) filled within the \(ms) ms deadline")),
                    trace: trace)
            }
            return MediationOutcome(result: .success(.noFill(NoFill(reason: "waterfall exhausted"))), trace: trace)
        }
        trace.winnerIndex = winner.index
        winner.ad.settleAuction(.won(clearingPrice: price))
        settleBids(except: nil, .lost(reason: .lostToHigherBid, winningPrice: price))
        // A fill the network did not price takes the line's publisher-defined price, if the line has one.
        let line = placement.lines[winner.index]
        let (ecpm, precision) =
            winner.ad.ecpm != nil
            ? (winner.ad.ecpm, winner.ad.pricePrecision) : (line.ecpm, RevenuePrecision.publisherDefined)
        let winning = WinningLine(
            index: winner.index, network: line.network, networkPlacement: line.placement, abLabel: placement.abLabel)
        return MediationOutcome(
            result: .success(
                .filled(
                    wrap(
                        winner.ad, request: request, placement: placement, ecpm: ecpm, precision: precision,
                        winning: winning, isBid: false))),
            trace: trace)
    }

    /// The ad handed to the app: the winner's creative under the mediated placement, with its price and winning line;
    /// its impression counts toward the placement's cap and pacing and its revenue metrics.
    private func wrap(
        _ ad: LoadedAd, request: AdRequest, placement: PlacementConfiguration, ecpm: Double?,
        precision: RevenuePrecision,
        winning: WinningLine, isBid: Bool
    ) -> LoadedAd {
        var winning = winning
        winning.isBid = isBid
        let window = placement.frequencyWindow
        return LoadedAd(
            networkID: ad.networkID,
            placement: request.placement,
            format: ad.format,
            creative: ad.creative,
            ecpm: ecpm,
            loadedAt: ad.loadedAt,
            expiresAt: ad.expiresAt,
            adapterData: ad.adapterData,
            reporter: MediatedAdReporter(
                inner: ad,
                onImpression: { [self] revenue in
                    let at = clock.now
                    pacing[request.placement]?.withLock {
                        $0.record(at, window: window, cap: placement.frequencyCap)
                    }
                    observeImpression(revenue)
                }),
            pricePrecision: precision,
            winningLine: winning)
    }

    /// Feeds a network's breaker, logging a change of phase.
    func recordBreaker(_ networkID: String, probe: Bool, _ event: WaterfallStateMachine.BreakerEvent) {
        let now = clock.now
        guard let breaker = breakers[networkID] else { return }
        let (before, after) = breaker.withLock { breaker in
            let before = breaker.state
            switch event {
            case .success: breaker.recordSuccess(probe: probe)
            case .failure: breaker.recordFailure(at: now, probe: probe)
            case .abandoned: breaker.recordAbandoned(probe: probe)
            }
            return (before, breaker.state)
        }
        if Self.phase(before) != Self.phase(after) { breakerChanged(networkID, to: after) }
    }

    private enum Input: Sendable {
        case answer(Int, Result<AdLoadResult, AdError>)
        /// The timer of generation `generation` reached its instant.
        case tick(generation: UInt64)
        /// A timer that was replaced or stopped ended without ticking.
        case timerStopped
        /// The calling task was cancelled.
        case callerCancelled
        /// The cancellation watcher ended because the waterfall finished.
        case watcherStopped
    }

    /// Runs `machine` until it finishes. Every line load, the one timer for the next deadline and a watcher for the
    /// caller's cancellation are child tasks of the caller (one task group), so priority and task-local values flow
    /// into the adapters and the caller's cancellation reaches every line. A line the machine gives up on (a higher
    /// line won, its timeout passed) is cancelled through its own ``ChildCancellation``; the group then waits for it to
    /// return, which a conforming adapter does within 100 ms (the kit's rule). Every fill that is not delivered is
    /// invalidated. Returns true when the caller cancelled.
    ///
    /// Lines start as immediate child tasks: each runs on the caller's thread until it first suspends, so a line that
    /// answers without suspending costs no thread hand-off. The timer and the watcher are only started before the loop
    /// really waits (no answer is ready), so a waterfall whose lines all answer at once starts neither.
    private func drive(
        _ machine: inout WaterfallStateMachine,
        request: AdRequest,
        format: AdFormat,
        lines: [WaterfallLine],
        deadline: AdInstant,
        tracer: (any Tracer)?
    ) async -> Bool {
        var state = machine
        let cancelled = await withTaskGroup(of: Input.self, returning: Bool.self) { group in
            // Per line while it runs: how to cancel it, and how its breaker admitted it.
            var running = [(cancellation: ChildCancellation, admission: CircuitBreaker.Admission)?](
                repeating: nil, count: lines.count)
            var timer: (at: AdInstant, generation: UInt64, cancellation: ChildCancellation)?
            var timerGeneration: UInt64 = 0
            var callerCancelled = false
            var watcher: Latch?
            // Answers finished but not yet read: a line child counts its answer before it returns.
            let ready = AnswerCount()
            var answersRead = 0

            var actions: [WaterfallStateMachine.Action] = []
            actions.reserveCapacity(2 * lines.count + 2)

            /// Runs one step of the machine and applies its actions, and those of lines skipped on the way, in one
            /// buffer reused by every step.
            func step(_ body: (inout WaterfallStateMachine, inout [WaterfallStateMachine.Action]) -> Void) {
                actions.removeAll(keepingCapacity: true)
                body(&state, &actions)
                var next = 0
                while next < actions.count {
                    let action = actions[next]
                    next += 1
                    switch action {
                    case .start(let index):
                        let line = lines[index]
                        // Read per line: an earlier line started at once may have run for a while.
                        let now = clock.now
                        let admission = breakers[line.network]?.withLock { $0.admit(at: now) } ?? .allowed
                        if admission == .probe { breakerChanged(line.network, to: .halfOpen(probing: true)) }
                        if admission == .rejected {
                            state.skip(index, reason: .breakerOpen, at: now, into: &actions)
                            continue
                        }
                        guard let network = networks[line.network] else { continue }
                        let lineRequest = Self.request(
                            request, for: line, format: format, timeout: min(line.timeout, deadline - now))
                        let cancellation = ChildCancellation()
                        running[index] = (cancellation, admission)
                        group.addImmediateTask {
                            let result = await cancellation.run {
                                if let tracer {
                                    await Self.tracedLoad(lineRequest, from: network, tracer: tracer)
                                } else {
                                    await Self.load(lineRequest, from: network)
                                }
                            }
                            ready.add()
                            return .answer(index, result)
                        }
                    case .cancel(let index):
                        running[index]?.cancellation.cancel()
                    case .invalidate(let ad):
                        ad.invalidate()
                    case .breaker(let index, let event):
                        recordBreaker(lines[index].network, probe: running[index]?.admission == .probe, event)
                    case .finish:
                        break
                    }
                }
            }

            /// Keeps exactly one timer, for the machine's next wake-up. A replaced timer is cancelled, and a tick from
            /// any generation but the current one is ignored, so a late tick never starts a second timer.
            func armTimer() {
                guard let next = state.nextWakeUp else {
                    timer?.cancellation.cancel()
                    timer = nil
                    return
                }
                if let current = timer, current.at == next { return }
                timer?.cancellation.cancel()
                timerGeneration &+= 1
                let generation = timerGeneration
                let cancellation = ChildCancellation()
                timer = (next, generation, cancellation)
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

            /// Before a wait that may suspend: the timer for the next wake-up, and the watcher once.
            func prepareToWait() {
                armTimer()
                guard watcher == nil else { return }
                let latch = Latch()
                watcher = latch
                group.addImmediateTask {
                    await latch.wait()
                    return Task.isCancelled ? .callerCancelled : .watcherStopped
                }
            }

            let begin = clock.now
            step { $0.begin(at: begin, into: &$1) }
            while !state.isFinished {
                // An answer already counted is read without suspending; otherwise the loop may wait, and only then
                // needs the timer and the watcher.
                if ready.value <= answersRead { prepareToWait() }
                guard let input = await group.next() else { break }
                let now = clock.now
                // The caller's cancellation reaches the lines at once; it is seen here before any of their answers.
                if !callerCancelled, Task.isCancelled {
                    callerCancelled = true
                    step { $0.cancelAll(at: now, into: &$1) }
                    if state.isFinished { break }
                }
                switch input {
                case .answer(let index, let result):
                    answersRead += 1
                    step { $0.answer(index, result, at: now, into: &$1) }
                    running[index] = nil
                case .tick(let generation):
                    guard generation == timer?.generation else { continue }
                    timer = nil
                    step { $0.advance(to: now, into: &$1) }
                case .callerCancelled:
                    if !callerCancelled {
                        callerCancelled = true
                        step { $0.cancelAll(at: now, into: &$1) }
                    }
                case .timerStopped, .watcherStopped:
                    continue
                }
                if state.isFinished { break }
            }
            // The waterfall is decided: stop the timer, the watcher and any line still running, then wait for them,
            // invalidating fills nobody will read.
            timer?.cancellation.cancel()
            watcher?.fire()
            for line in running { line?.cancellation.cancel() }
            for await input in group {
                if case .answer(_, .success(.filled(let ad))) = input { ad.invalidate() }
            }
            return callerCancelled
        }
        machine = state
        return cancelled
    }

    /// A line's request: the caller's, for the line's placement and floor, with the line's time left.
    private static func request(
        _ request: AdRequest, for line: WaterfallLine, format: AdFormat, timeout: Duration
    ) -> AdRequest {
        var lineRequest = request
        lineRequest.placement = line.placement
        lineRequest.format = format
        lineRequest.timeout = timeout
        lineRequest.floorEcpm = line.floorEcpm
        return lineRequest
    }

    /// Loads one line inside an `ad line` span, a child of the mediation span (the line runs in a child task, so the
    /// span's context — and any task-local value — reaches the adapter and its transport). Attributes: network, the
    /// line's placement, outcome (`fill`, `no_fill`, `error`), error code and eCPM.
    static func tracedLoad(_ request: AdRequest, from network: any AdNetwork, tracer: (any Tracer)?) async
        -> Result<AdLoadResult, AdError>
    {
        // Without a tracer (nil for swift-distributed-tracing's no-op default) a span would record nothing, yet
        // binding it costs a task-local context per line.
        guard let tracer else { return await load(request, from: network) }
        return await tracer.withSpan("ad line", ofKind: .client) { span in
            guard span.isRecording else { return await load(request, from: network) }
            span.attributes["admediation.network"] = network.id
            span.attributes["admediation.line_placement"] = request.placement
            let result = await load(request, from: network)
            switch result {
            case .success(.filled(let ad)):
                span.attributes["admediation.outcome"] = "fill"
                if let ecpm = ad.ecpm { span.attributes["admediation.ecpm"] = ecpm }
            case .success(.noFill):
                span.attributes["admediation.outcome"] = "no_fill"
            case .failure(let error):
                span.attributes["admediation.outcome"] = "error"
                span.attributes["admediation.code"] = error.code.name
            }
            return result
        }
    }

    /// Loads one line. A cancelled load's answer (possibly a late fill, which the machine then invalidates) is still
    /// returned.
    static func load(_ request: AdRequest, from network: any AdNetwork) async -> Result<AdLoadResult, AdError> {
        do {
            return .success(try await network.load(request))
        } catch let error as AdError {
            return .failure(error)
        } catch is CancellationError {
            return .failure(AdError(.cancelled, "cancelled"))
        } catch {
            return .failure(AdError(.network, "\(error)"))
        }
    }
}

/// Forwards a mediated ad's events to the winning network's ad and counts impressions for caps and pacing.
private struct MediatedAdReporter: AdEventDelivering {
    let inner: LoadedAd
    let onImpression: @Sendable (ImpressionRevenue) -> Void

    func report(_ event: AdEvent, for ad: LoadedAd) async throws {
        try await inner.report(event)
        if event == .impression { onImpression(ad.revenue) }
    }

    /// The winning network's own answer; a `click` the outer ad let through (one per tap) is never held back by the
    /// inner ad's once-per-event record.
    func deliver(_ event: AdEvent, for ad: LoadedAd) async throws -> AdEventDelivery {
        let delivery = try await inner.deliver(event, repeating: event == .click)
        if event == .impression, delivery != .alreadyReported { onImpression(ad.revenue) }
        return delivery
    }

    func invalidated(_ ad: LoadedAd) {
        inner.invalidate()
    }

    /// The winning network's rules: its events come back through this reporter, so impressions are still counted.
    func fullScreenRules(for ad: LoadedAd) -> (any FullScreenRules)? { inner.fullScreenRules }
}

import CoreMetrics
import Foundation
import Logging
import Tracing

/// A waterfall over other networks, and itself an ``AdNetwork``: waterfalls nest, and anything that takes a
/// network takes a mediator.
///
/// For each mediated placement it asks the configured lines (sequentially, or in parallel with priority kept),
/// applies floors, expiry, frequency caps, pacing and a circuit breaker per network, and returns the winning ad
/// together with a ``MediationTrace`` of every line. The returned ad is the winning network's own ad, annotated with
/// the decision (``LoadedAd/mediation``); reporting its impression counts toward the placement's cap and pacing.
///
/// Nested in another mediator (as one of its lines), a mediator leaves its winner's auction result to the outermost
/// decider: the winner is told it won only when the outer decision picks it, and that it lost otherwise.
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
    let optimizers: LockedValue<[String: WaterfallOptimizer]>
    let logger: Logger
    let metrics: MetricHandles
    /// The tracer its spans go to: the one given, else the system's (`InstrumentationSystem.tracer`) when the
    /// mediator was created, as the metrics factory is; nil when that is the no-op tracer (nothing to record).
    let tracer: (any Tracer)?
    /// How consent is read and enforced (issue 34).
    let privacy: PrivacyConfiguration
    /// The loads still running after their request was decided (cancelled, not yet returned).
    let backgroundLoads = BackgroundLoads()
    /// Each placement's (and arm's) slots and routes, built once.
    let plans: [String: PlacementPlan]

    /// Creates a mediator after validating `configuration` against `networks` (by id). Throws
    /// ``AdError/Code/configuration`` naming the field at fault.
    public init(
        id: String = "mediator",
        networks: [any AdNetwork],
        configuration: MediationConfiguration,
        clock: any AdClock = SystemAdClock(),
        logger: Logger = Logger(label: "admediation.mediator"),
        metrics: any MetricsFactory = MetricsSystem.factory,
        tracer: (any Tracer)? = nil,
        privacy: PrivacyConfiguration = PrivacyConfiguration()
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
        let tracer = tracer ?? InstrumentationSystem.tracer
        self.tracer = tracer is NoOpTracer ? nil : tracer
        self.privacy = privacy
        self.capabilities = AdNetworkCapabilities(
            formats: Set(configuration.placements.values.map(\.format.kind)),
            reportsPrice: byID.values.contains { $0.capabilities.reportsPrice } || configuration.pricesALine)
        let breakers = byID.mapValues { _ in
            Guarded(
                CircuitBreaker(
                    threshold: configuration.circuitBreaker.failureThreshold,
                    coolDown: configuration.circuitBreaker.coolDown))
        }
        self.breakers = breakers
        let pacing = configuration.placements.mapValues { _ in Guarded(PlacementPacing()) }
        self.pacing = pacing
        self.plans = PlacementPlan.all(
            of: configuration, networks: byID, breakers: breakers, privacy: privacy, pacing: pacing)
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
        self.optimizers = LockedValue(optimizers)
    }

    /// The breaker state of a network, for diagnostics.
    public func breakerState(of networkID: String) -> CircuitBreaker.State? {
        breakers[networkID]?.withLock { $0.state }
    }

    /// How many loads still run after their request was decided: each was cancelled at the decision, and a network
    /// that ignores cancellation keeps its load here until it returns (the caller never waits for it; its late fill
    /// is then settled lost and invalidated).
    public var backgroundLoadCount: Int { backgroundLoads.count }

    /// The longest ``shutdown()`` waits for loads that still run after their decision.
    public static let shutdownGrace: Duration = .seconds(2)

    /// Waits until every load still running after its request's decision has returned (and its late fill was
    /// settled lost and invalidated), at most ``shutdownGrace`` on the mediator's clock: a load that ignores
    /// cancellation and never returns cannot hold it longer. The mediator keeps working; call it when it is no longer
    /// used.
    public func shutdown() async {
        let outcome = FirstOutcome<Void>()
        let (loads, clock, deadline) = (backgroundLoads, clock, clock.now + Self.shutdownGrace)
        let drained = Task {
            await loads.drained()
            outcome.resume(with: ())
        }
        let grace = Task {
            try? await clock.sleep(until: deadline)
            outcome.resume(with: ())
        }
        await withTaskCancellationHandler {
            await outcome.value
        } onCancel: {
            grace.cancel()
        }
        drained.cancel()
        grace.cancel()
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
        let request = withStoredConsent(request)
        let outcome: MediationOutcome
        if let tracer {
            outcome = await tracer.withSpan("mediation", ofKind: .internal) { span in
                let outcome = await decide(request, tracer: tracer)
                Self.describe(outcome, placement: request.placement, on: span)
                return outcome
            }
        } else {
            // Nothing would be recorded: no span, no task-local context to bind.
            outcome = await decide(request, tracer: nil)
        }
        observe(outcome, placement: request.placement)
        return outcome
    }

    /// Decides `request`; `tracer` is nil when spans would record nothing. A ``DecisionEngine`` decides and
    /// ``run(_:plan:request:lossNotices:tracer:conclude:)`` executes its actions; here only what the engine cannot
    /// own: the placement's arm, the shared pacing and optimizer state, and the ad handed to the app.
    private nonisolated(nonsending) func decide(_ request: AdRequest, tracer: (any Tracer)?) async
        -> MediationOutcome
    {
        let now = clock.now
        // The plan of the placement (the same keys as the configuration's placements), else of the arm it draws.
        guard let configured = plans[request.placement] else {
            return Self.refused(request, AdError(.configuration, "unknown placement \"\(request.placement)\""))
        }
        let optimizerKey =
            configured.placement.arms.isEmpty
            ? request.placement : Self.arm(of: configured.placement, id: request.placement, userID: request.userID)
        guard let plan = configured.placement.arms.isEmpty ? configured : plans[optimizerKey] else {
            return Self.refused(request, AdError(.configuration, "unknown placement \"\(request.placement)\""))
        }
        // Read from the plan, never copied out of it.
        if plan.placement.format.kind != request.format.kind {
            let message =
                "placement \"\(request.placement)\" serves \(plan.placement.format), not \(request.format)"
            return Self.refused(request, AdError(.configuration, message))
        }
        // Frequency cap and pacing: the engine then decides at once (every line skipped, no fill).
        let blocked = plan.pacing?.withLock {
            $0.block(
                at: now, cap: plan.placement.frequencyCap, window: plan.placement.frequencyWindow,
                minInterval: plan.placement.minInterval)
        }
        let optimized = plan.placement.optimizer != nil
        let order =
            !optimized || blocked != nil
            ? nil : optimizers.withLock { $0[optimizerKey]?.order(plan.placement.lines) }
        // The outcome is read from the decided engine where it is: the engine is moved, never copied (a copy shares
        // its arrays, to be copied again).
        let observed = optimized && blocked == nil ? optimizerKey : nil
        let conclude = { (engine: borrowing DecisionEngine) -> MediationOutcome in
            self.outcome(of: engine, request: request, plan: plan, optimizerKey: observed)
        }
        let nested = MediationNesting.depth > 0
        if blocked == nil, !Task.isCancelled {
            // Loss notices: the stricter of the caller's and the placement's setting, for every line and settlement.
            let lossNotices = request.lossNotices.stricter(plan.placement.lossNotices)
            return await run(
                DecisionEngine(
                    placement: plan.placement, order: order, startedAt: now, timeout: request.timeout, nested: nested,
                    slots: plan.slots),
                plan: plan, request: request, lossNotices: lossNotices, tracer: tracer, conclude: conclude)
        }
        // Blocked by pacing or the cap (decided at once), or cancelled before it began.
        var engine = DecisionEngine(
            placement: plan.placement, order: order, blocked: blocked, startedAt: now, timeout: request.timeout,
            nested: nested, slots: plan.slots)
        if !engine.isFinished {
            var actions: [DecisionEngine.Action] = []
            engine.callerCancelled(at: now, into: &actions)
            Self.perform(actions)
        }
        return conclude(engine)
    }

    /// The decided engine's trace and result; the trace feeds the self-ordering waterfall of `optimizerKey`, if any.
    private func outcome(
        of engine: borrowing DecisionEngine, request: AdRequest, plan: PlacementPlan, optimizerKey: String?
    ) -> MediationOutcome {
        let decidedAt = engine.finishedAt ?? clock.now
        let trace = annotatePrivacy(engine.trace(placement: request.placement, at: decidedAt), signals: request.privacy)
        if let optimizerKey {
            optimizers.withLock { $0[optimizerKey]?.observe(trace, lines: plan.placement.lines) }
        }
        return MediationOutcome(result: result(of: engine, request: request, plan: plan), trace: trace)
    }

    /// A request refused before any decision (unknown placement, wrong format), with an empty trace.
    private static func refused(_ request: AdRequest, _ error: AdError) -> MediationOutcome {
        MediationOutcome(
            result: .failure(error),
            trace: MediationTrace(placement: request.placement, lines: [], winnerIndex: nil, duration: .zero))
    }

    /// The engine's decision as the caller's result: the winner wrapped for the app, no fill, or the error.
    private func result(
        of engine: borrowing DecisionEngine, request: AdRequest, plan: PlacementPlan
    ) -> Result<AdLoadResult, AdError> {
        switch engine.decision {
        case .filled(let ad, let slot, let ecpm, let precision):
            let spec = engine.slots[slot]
            let (index, isBid) =
                switch spec.role {
                case .bidder(let index): (index, true)
                case .line(let index): (index, false)
                }
            let winning = WinningLine(
                index: index, network: spec.network, networkPlacement: spec.placement,
                abLabel: plan.placement.abLabel)
            return .success(
                .filled(
                    wrap(
                        ad, request: request, plan: plan, ecpm: ecpm, precision: precision, winning: winning,
                        isBid: isBid)))
        case .noFill(let reason):
            return .success(.noFill(NoFill(reason: reason)))
        case .timeout:
            let ms = Int((engine.deadline - engine.startedAt).milliseconds)
            return .failure(AdError(.timeout, "no line of \(request.placement) filled within the \(ms) ms deadline"))
        case .cancelled:
            return .failure(AdError(.cancelled, "the request for \(request.placement) was cancelled"))
        case nil:
            return .success(.noFill(NoFill(reason: "waterfall exhausted")))
        }
    }

    /// The ad handed to the app: the winning network's own ad, annotated with this decision (the mediated placement,
    /// the winning line, the booked price); the mediator observes its delivered events, so its impression counts
    /// toward the placement's cap and pacing and its revenue metrics.
    private func wrap(
        _ ad: LoadedAd, request: AdRequest, plan: PlacementPlan, ecpm: Double?, precision: RevenuePrecision,
        winning: WinningLine, isBid: Bool
    ) -> LoadedAd {
        var winning = winning
        winning.isBid = isBid
        // What the impression's pacing needs, not the whole placement.
        let (window, cap, pacing) = (plan.placement.frequencyWindow, plan.placement.frequencyCap, plan.pacing)
        let facts = MediationFacts(
            mediatorID: id, placement: request.placement, line: winning, ecpm: ecpm, precision: precision)
        let revenue = LoadedAd.revenue(
            ecpm: facts.ecpm, precision: facts.precision, networkID: ad.networkID, placement: facts.placement,
            line: facts.line)
        ad.annotate(facts) { [self] record in
            guard record.event == .impression, record.occurrence == 1 else { return }
            let at = clock.now
            pacing?.withLock { $0.record(at, window: window, cap: cap) }
            observeImpression(revenue)
        }
        return ad
    }

    /// Feeds a network's breaker, logging a change of phase.
    func recordBreaker(
        _ networkID: String, _ breaker: Guarded<CircuitBreaker>?, probe: Bool, _ event: DecisionEngine.BreakerEvent
    ) {
        guard let breaker else { return }
        let now = clock.now
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

    /// Loads one line inside an `ad line` span, a child of the mediation span (the line runs in a child task, so the
    /// span's context — and any task-local value — reaches the adapter and its transport). Attributes: network, the
    /// line's placement, outcome (`fill`, `no_fill`, `error`), error code and eCPM.
    nonisolated(nonsending) static func tracedLoad(
        _ request: AdRequest, from network: any AdNetwork, tracer: (any Tracer)?
    ) async
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
    nonisolated(nonsending) static func load(_ request: AdRequest, from network: any AdNetwork) async
        -> Result<AdLoadResult, AdError>
    {
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

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
    private let networks: [String: any AdNetwork]
    private let configuration: MediationConfiguration
    private let clock: any AdClock
    private let shared: Mutex<SharedState>
    private let logger: Logger
    private let metrics: MetricHandles
    private let tracer: (any Tracer)?

    private struct SharedState {
        var breakers: [String: CircuitBreaker] = [:]
        var pacing: [String: PlacementPacing] = [:]
        var optimizers: [String: WaterfallOptimizer] = [:]
    }

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
            formats: Set(configuration.placements.values.map(\.format)),
            loadsWhileShowing: true,
            reportsPrice: byID.values.contains { $0.capabilities.reportsPrice })
        var state = SharedState()
        for networkID in byID.keys {
            state.breakers[networkID] = CircuitBreaker(
                threshold: configuration.circuitBreaker.failureThreshold,
                coolDown: OutsideValue.duration(seconds: configuration.circuitBreaker.coolDownS) ?? .seconds(30))
        }
        for (placementID, placement) in configuration.placements {
            if let optimizer = placement.optimizer, placement.arms.isEmpty {
                state.optimizers[placementID] = WaterfallOptimizer(
                    configuration: optimizer, seed: UInt64.random(in: 0...UInt64.max))
            }
            for arm in placement.arms {
                if let optimizer = placement.variant(arm).optimizer {
                    state.optimizers["\(placementID)#\(arm.label)"] = WaterfallOptimizer(
                        configuration: optimizer, seed: UInt64.random(in: 0...UInt64.max))
                }
            }
        }
        self.shared = Mutex(state)
    }

    /// What the self-ordering waterfall of `placement` has learned, by `network/placement` of each line (empty when
    /// the placement has no optimizer). For a placement with A/B arms, each arm learns apart: ask for `placement#label`.
    public func lineStatistics(of placement: String) -> [String: LineStatistics] {
        shared.withLock { $0.optimizers[placement]?.statistics ?? [:] }
    }

    /// Saves what every self-ordering placement learned into `store`, one entry per placement
    /// (`optimizer/<placement>`), so the next launch starts from it.
    public func saveOptimizerState(to store: any MediationStateStore) async throws(AdError) {
        let snapshot = shared.withLock { $0.optimizers.mapValues(\.statistics) }
        for (placement, statistics) in snapshot.sorted(by: { $0.key < $1.key }) {
            let data: Data
            do { data = try JSONEncoder().encode(statistics) } catch {
                throw AdError(.storage, "optimizer state of \(placement) could not be encoded: \(error)")
            }
            try await store.save(data, key: "optimizer/\(placement)")
        }
    }

    /// Restores what was saved by ``saveOptimizerState(to:)``. Entries that are unreadable or inconsistent (negative,
    /// not finite, more fills than attempts) are ignored, so a damaged store costs learning, never a crash.
    public func restoreOptimizerState(from store: any MediationStateStore) async throws(AdError) {
        let placements = shared.withLock { Array($0.optimizers.keys) }
        for placement in placements.sorted() {
            guard let data = try await store.load(key: "optimizer/\(placement)") else { continue }
            if JSONLimits(maxBytes: 1 << 20, maxDepth: 4, maxStringBytes: 4096, maxItems: 10_000).violation(in: data)
                != nil
            {
                continue
            }
            guard let saved = try? JSONDecoder().decode([String: LineStatistics].self, from: data) else { continue }
            shared.withLock { $0.optimizers[placement]?.restore(saved) }
        }
    }

    /// The breaker state of a network, for diagnostics.
    public func breakerState(of networkID: String) -> CircuitBreaker.State? {
        shared.withLock { $0.breakers[networkID]?.state }
    }

    /// How many impressions of `placement` the pacing keeps (for the bound's tests).
    func pacedImpressionCount(of placement: String) -> Int {
        shared.withLock { $0.pacing[placement]?.impressions.count ?? 0 }
    }

    /// Loads the mediated placement `request.placement`. See ``loadWithTrace(_:)`` for the trace.
    public func load(_ request: AdRequest) async throws -> AdLoadResult {
        try await loadWithTrace(request).result.get()
    }

    /// Loads the mediated placement `request.placement` and returns the result with its trace. Fails with
    /// ``AdError/Code/configuration`` for an unknown placement or a format that does not match it, and
    /// ``AdError/Code/cancelled`` when the calling task is cancelled (every line is cancelled too).
    public func loadWithTrace(_ request: AdRequest) async -> MediationOutcome {
        let tracer = self.tracer ?? InstrumentationSystem.tracer
        let outcome = await tracer.withSpan("mediation", ofKind: .internal) { span in
            let outcome = await decide(request, tracer: tracer)
            Self.describe(outcome, placement: request.placement, on: span)
            return outcome
        }
        observe(outcome, placement: request.placement)
        return outcome
    }

    /// The mediation span's attributes: placement, outcome, winner and its eCPM, duration, and each line's outcome
    /// as the trace has it (`network:outcome[:code]`, in line order) — the same facts as ``MediationTrace``.
    private static func describe(_ outcome: MediationOutcome, placement: String, on span: any Span) {
        guard span.isRecording else { return }
        span.attributes["admediation.placement"] = placement
        if let label = outcome.trace.abLabel { span.attributes["admediation.ab_label"] = label }
        span.attributes["admediation.duration_ms"] = Int(outcome.trace.duration.milliseconds.rounded())
        span.attributes["admediation.lines"] = outcome.trace.lines.map { line -> String in
            switch line.outcome {
            case .error(let error): "\(line.network):error:\(error.code.name)"
            case .skipped(let reason): "\(line.network):skipped:\(reason.rawValue)"
            default: "\(line.network):\(line.outcome.name)"
            }
        }.joined(separator: ",")
        if !outcome.trace.bids.isEmpty {
            span.attributes["admediation.bids"] = outcome.trace.bids.map { bid -> String in
                let price = bid.price.map { ":\($0)" } ?? ""
                switch bid.auction {
                case .won(let clearing)?: return "\(bid.network):won\(price):clears=\(clearing)"
                case .lost(let reason, _)?: return "\(bid.network):lost\(price):\(reason.code)"
                case nil: return "\(bid.network):\(bid.outcome.name)"
                }
            }.joined(separator: ",")
        }
        switch outcome.result {
        case .success(.filled(let ad)):
            span.attributes["admediation.outcome"] = "filled"
            span.attributes["admediation.network"] = ad.networkID
            if let ecpm = ad.ecpm { span.attributes["admediation.ecpm"] = ecpm }
            span.attributes["admediation.revenue_precision"] = ad.pricePrecision.rawValue
        case .success(.noFill):
            span.attributes["admediation.outcome"] = "no_fill"
        case .failure(let error):
            span.attributes["admediation.outcome"] = "failed"
            span.attributes["admediation.code"] = error.code.name
        }
    }

    /// Logs the decision (info) and each line (debug), and records the metrics: per bid `admediation_bid_outcomes_total`
    /// (by network, outcome and auction result: `won`, `lost_<loss code>`, `none`) and `admediation_bid_latency`;
    /// `admediation_requests_total`,
    /// `admediation_fills_total` (by winning network), `admediation_no_fills_total`, `admediation_errors_total` (by
    /// code), `admediation_decision_latency`, and per line `admediation_line_latency` and
    /// `admediation_line_outcomes_total` (by outcome and error code). Dimensions: placement, network, outcome, code.
    private func observe(_ outcome: MediationOutcome, placement: String) {
        metrics.counter("admediation_requests_total", [("placement", placement)]).increment()
        metrics.timer("admediation_decision_latency", [("placement", placement)])
            .recordNanoseconds(outcome.trace.duration.nanosecondsClamped)
        for line in outcome.trace.lines {
            var code = ""
            switch line.outcome {
            case .error(let error): code = error.code.name
            case .skipped(let reason): code = reason.rawValue
            case .timeout: code = "timeout"
            default: break
            }
            metrics.counter(
                "admediation_line_outcomes_total",
                [("placement", placement), ("network", line.network), ("outcome", line.outcome.name), ("code", code)]
            ).increment()
            if let latency = line.latency {
                metrics.timer("admediation_line_latency", [("placement", placement), ("network", line.network)])
                    .recordNanoseconds(latency.nanosecondsClamped)
            }
            guard logger.logLevel <= .debug else { continue }
            var metadata: Logger.Metadata = [
                "placement": "\(placement)", "network": "\(line.network)", "line_placement": "\(line.placement)",
                "outcome": "\(line.outcome.name)",
            ]
            if !code.isEmpty { metadata["code"] = "\(code)" }
            if let latency = line.latency { metadata["latency_ms"] = "\(Int(latency.milliseconds.rounded()))" }
            logger.debug("line", metadata: metadata)
        }
        for bid in outcome.trace.bids {
            var result = "none"
            switch bid.auction {
            case .won?: result = "won"
            case .lost(let reason, _)?: result = "lost_\(reason.code)"
            case nil: break
            }
            metrics.counter(
                "admediation_bid_outcomes_total",
                [
                    ("placement", placement), ("network", bid.network), ("outcome", bid.outcome.name),
                    ("auction", result),
                ]
            ).increment()
            if let latency = bid.latency {
                metrics.timer("admediation_bid_latency", [("placement", placement), ("network", bid.network)])
                    .recordNanoseconds(latency.nanosecondsClamped)
            }
        }
        let milliseconds = "\(Int(outcome.trace.duration.milliseconds.rounded()))"
        switch outcome.result {
        case .success(.filled(let ad)):
            metrics.counter("admediation_fills_total", [("placement", placement), ("network", ad.networkID)])
                .increment()
            var metadata: Logger.Metadata = [
                "placement": "\(placement)", "network": "\(ad.networkID)", "duration_ms": "\(milliseconds)",
            ]
            if let label = outcome.trace.abLabel { metadata["ab_label"] = "\(label)" }
            logger.info("filled", metadata: metadata)
        case .success(.noFill(let noFill)):
            metrics.counter("admediation_no_fills_total", [("placement", placement)]).increment()
            logger.info(
                "no fill",
                metadata: ["placement": "\(placement)", "reason": "\(noFill.reason)", "duration_ms": "\(milliseconds)"])
        case .failure(let error):
            metrics.counter("admediation_errors_total", [("placement", placement), ("code", error.code.name)])
                .increment()
            logger.info(
                "failed",
                metadata: ["placement": "\(placement)", "code": "\(error.code.name)", "duration_ms": "\(milliseconds)"])
        }
    }

    /// An impression of a mediated ad: `admediation_impressions_total` and `admediation_impression_revenue_micros`
    /// (millionths of a US dollar), by placement, network and revenue precision (and A/B label when the placement has
    /// one), and an info log line with the revenue.
    private func observeImpression(_ revenue: ImpressionRevenue) {
        var dimensions = [
            ("placement", revenue.placement), ("network", revenue.networkID), ("precision", revenue.precision.rawValue),
        ]
        if let label = revenue.line?.abLabel { dimensions.append(("ab_label", label)) }
        metrics.counter("admediation_impressions_total", dimensions).increment()
        metrics.counter("admediation_impression_revenue_micros", dimensions).increment(by: revenue.micros)
        var metadata: Logger.Metadata = [
            "placement": "\(revenue.placement)", "network": "\(revenue.networkID)",
            "precision": "\(revenue.precision.rawValue)",
            "revenue_usd": "\(revenue.value)",
        ]
        if let line = revenue.line {
            metadata["line"] = "\(line.index)"
            if let label = line.abLabel { metadata["ab_label"] = "\(label)" }
        }
        logger.info("impression", metadata: metadata)
    }

    private func decide(_ request: AdRequest, tracer: any Tracer) async -> MediationOutcome {
        let now = clock.now
        guard let configured = configuration.placements[request.placement] else {
            return MediationOutcome(
                result: .failure(AdError(.configuration, "unknown placement \"\(request.placement)\"")),
                trace: MediationTrace(placement: request.placement, lines: [], winnerIndex: nil, duration: .zero))
        }
        let (placement, optimizerKey) = Self.arm(of: configured, id: request.placement, userID: request.userID)
        let format = placement.adFormat ?? request.format
        let lineIDs = placement.lines.map { (network: $0.network, placement: $0.placement) }
        if format.name != request.format.name {
            return MediationOutcome(
                result: .failure(
                    AdError(
                        .configuration, "placement \"\(request.placement)\" serves \(format), not \(request.format)")),
                trace: MediationTrace(placement: request.placement, lines: [], winnerIndex: nil, duration: .zero))
        }

        // Frequency cap and pacing: every line is skipped, and the answer is no fill.
        let window = OutsideValue.duration(seconds: placement.frequencyWindowS) ?? .seconds(3600)
        let minInterval = placement.minIntervalS.flatMap { OutsideValue.duration(seconds: $0) }
        if let reason = shared.withLock({
            $0.pacing[request.placement, default: .init()].block(
                at: now, cap: placement.frequencyCap, window: window, minInterval: minInterval)
        }) {
            let lines = lineIDs.map {
                LineTrace(
                    network: $0.network, placement: $0.placement, outcome: .skipped(reason), latency: nil, ecpm: nil)
            }
            return MediationOutcome(
                result: .success(.noFill(NoFill(reason: reason.rawValue))),
                trace: MediationTrace(
                    placement: request.placement, lines: lines, winnerIndex: nil, duration: .zero,
                    abLabel: placement.abLabel))
        }

        var deadline = now + .milliseconds(min(max(placement.deadlineMs, 1), Limits.maxMilliseconds))
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

        // 2. The waterfall: the optimizer's order (or the configured one), lines that cannot beat the best bid left out.
        let order =
            placement.optimizer == nil
            ? Array(placement.lines.indices)
            : shared.withLock { $0.optimizers[optimizerKey]?.order(placement.lines) } ?? Array(placement.lines.indices)
        let eligible = order.filter { index in bestBid.map { Self.price(of: placement.lines[index]) > $0.price } ?? true
        }
        let lines = eligible.map { placement.lines[$0] }
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
            shared.withLock { $0.optimizers[optimizerKey]?.observe(trace, lines: placement.lines) }
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

    /// The arm a request runs, and the key of its optimizer state (`placement`, or `placement#label` for an arm). With
    /// a user id the choice is sticky: an FNV-1a hash of placement and user picks the arm, so a user sees one arm.
    static func arm(of placement: PlacementConfiguration, id: String, userID: String?) -> (
        PlacementConfiguration, String
    ) {
        guard !placement.arms.isEmpty else { return (placement, id) }
        let total = placement.arms.reduce(0) { $0 + $1.weight }
        var point: Double
        if let userID {
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            for byte in "\(id)\u{0}\(userID)".utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
            point = Double(hash >> 11) / Double(UInt64(1) << 53)
        } else {
            point = Double.random(in: 0..<1)
        }
        point *= total
        for arm in placement.arms {
            if point < arm.weight { return (placement.variant(arm), "\(id)#\(arm.label)") }
            point -= arm.weight
        }
        let last = placement.arms[placement.arms.count - 1]
        return (placement.variant(last), "\(id)#\(last.label)")
    }

    /// The price a line must beat a bid with: its `floor_ecpm`, else its publisher `ecpm`, else 0.
    static func price(of line: WaterfallLine) -> Double { line.floorEcpm ?? line.ecpm ?? 0 }

    /// First price: the bid. Second price: max(the next valid bid + 0.01, the bidder's floor), never above the bid.
    static func clearingPrice(
        of winner: (index: Int, ad: LoadedAd, price: Double), among valid: [(index: Int, ad: LoadedAd, price: Double)],
        auction: AuctionType, floor: Double?
    ) -> Double {
        guard auction == .secondPrice else { return winner.price }
        let second = valid.filter { $0.index != winner.index }.map(\.price).max()
        let clearing = max(second.map { $0 + 0.01 } ?? 0, floor ?? 0)
        return min(winner.price, (clearing * 10_000).rounded() / 10_000)
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
        let window = OutsideValue.duration(seconds: placement.frequencyWindowS) ?? .seconds(3600)
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
                    shared.withLock {
                        $0.pacing[request.placement, default: .init()].record(
                            at, window: window, cap: placement.frequencyCap)
                    }
                    observeImpression(revenue)
                }),
            pricePrecision: precision,
            winningLine: winning)
    }

    private struct BidAnswer: Sendable {
        var result: Result<AdLoadResult, AdError>?
        var latency: Duration?
        var skipped: SkipReason?
        var timedOut = false
    }

    /// Asks every bidder at once, each within min(its timeout, the time left), with `floor_ecpm` as the request's
    /// floor. A timer at the latest bidder deadline cancels those still running (they count as timeouts); their late
    /// answers are invalidated. Breakers apply as for lines.
    private func collectBids(
        _ request: AdRequest, format: AdFormat, placement: PlacementConfiguration, deadline: AdInstant,
        tracer: any Tracer
    ) async -> [BidAnswer] {
        let start = clock.now
        var answers = Array(repeating: BidAnswer(), count: placement.bidders.count)
        await withTaskGroup(of: (index: Int, result: Result<AdLoadResult, AdError>)?.self) { group in
            var running: [Int: (cancellation: ChildCancellation, probe: Bool)] = [:]
            var latest = start
            for (index, bidder) in placement.bidders.enumerated() {
                let admission = shared.withLock { $0.breakers[bidder.network]?.admit(at: clock.now) ?? .allowed }
                if admission == .probe { breakerChanged(bidder.network, to: .halfOpen(probing: true)) }
                let remaining = deadline - clock.now
                guard admission != .rejected, remaining > .zero, let network = networks[bidder.network] else {
                    answers[index].skipped = admission == .rejected ? .breakerOpen : .notReached
                    continue
                }
                var bidRequest = request
                bidRequest.placement = bidder.placement
                bidRequest.format = format
                bidRequest.timeout = min(bidder.timeout, remaining)
                bidRequest.floorEcpm = bidder.floorEcpm
                latest = max(latest, clock.now + min(bidder.timeout, remaining))
                let cancellation = ChildCancellation()
                running[index] = (cancellation, admission == .probe)
                group.addTask {
                    (index, await cancellation.run { await Self.tracedLoad(bidRequest, from: network, tracer: tracer) })
                }
            }
            let timer = ChildCancellation()
            group.addTask { [clock, latest] in
                await timer.run { try? await clock.sleep(until: latest) }
                return nil
            }
            while let input = await group.next() {
                guard let (index, result) = input else {
                    // The bidders' time is up (or the caller cancelled): whoever is still running timed out.
                    for (index, entry) in running {
                        answers[index].timedOut = true
                        answers[index].latency = clock.now - start
                        entry.cancellation.cancel()
                        recordBreaker(
                            placement.bidders[index].network, probe: entry.probe,
                            Task.isCancelled ? .abandoned : .failure)
                    }
                    running = [:]
                    continue
                }
                guard let entry = running.removeValue(forKey: index) else {
                    if case .success(.filled(let ad)) = result {
                        ad.settleAuction(.lost(reason: .internalError, winningPrice: nil))
                        ad.invalidate()
                    }
                    continue
                }
                answers[index].result = result
                answers[index].latency = clock.now - start
                let event: WaterfallStateMachine.BreakerEvent =
                    switch result {
                    case .success: .success
                    case .failure(let error) where error.code == .cancelled: .abandoned
                    case .failure: .failure
                    }
                recordBreaker(placement.bidders[index].network, probe: entry.probe, event)
                if running.isEmpty { timer.cancel() }
            }
        }
        return answers
    }

    /// Turns the bidders' answers into their traces and the valid bids. A fill that has expired, has no finite price
    /// or is under the bidder's floor is settled as lost (reason 2, 3 or 100) and invalidated.
    private static func classify(
        _ answers: [BidAnswer], bidders: [BidderLine], at now: AdInstant
    ) -> ([BidTrace], [(index: Int, ad: LoadedAd, price: Double)]) {
        var traces: [BidTrace] = []
        var valid: [(index: Int, ad: LoadedAd, price: Double)] = []
        for (index, answer) in answers.enumerated() {
            let bidder = bidders[index]
            var trace = BidTrace(
                network: bidder.network, placement: bidder.placement, outcome: .skipped(.notReached),
                latency: answer.latency)
            func reject(_ ad: LoadedAd, _ outcome: LineOutcome, _ reason: AuctionLossReason) {
                trace.outcome = outcome
                trace.auction = .lost(reason: reason, winningPrice: nil)
                ad.settleAuction(.lost(reason: reason, winningPrice: nil))
                ad.invalidate()
            }
            if let skipped = answer.skipped {
                trace.outcome = .skipped(skipped)
            } else if answer.timedOut {
                trace.outcome = .timeout
            } else if let result = answer.result {
                switch result {
                case .success(.filled(let ad)):
                    trace.price = ad.ecpm
                    if ad.isExpired(at: now) {
                        reject(ad, .skipped(.expired), .expired)
                    } else if let price = ad.ecpm, price.isFinite, price >= 0 {
                        if let floor = bidder.floorEcpm, price < floor {
                            reject(ad, .skipped(.belowFloor), .belowFloor)
                        } else {
                            trace.outcome = .fill
                            valid.append((index, ad, price))
                        }
                    } else {
                        reject(ad, .error(AdError(.invalidResponse, "a bid without a finite price")), .invalidResponse)
                    }
                case .success(.noFill(let noFill)):
                    trace.outcome = .noFill(reason: noFill.reason)
                case .failure(let error):
                    trace.outcome =
                        switch error.code {
                        case .timeout: .timeout
                        case .cancelled: .skipped(.cancelled)
                        default: .error(error)
                        }
                }
            }
            traces.append(trace)
        }
        return (traces, valid)
    }

    /// Feeds a network's breaker, logging a change of phase.
    private func recordBreaker(_ networkID: String, probe: Bool, _ event: WaterfallStateMachine.BreakerEvent) {
        let now = clock.now
        let (before, after) = shared.withLock { shared in
            let before = shared.breakers[networkID]?.state
            switch event {
            case .success: shared.breakers[networkID]?.recordSuccess(probe: probe)
            case .failure: shared.breakers[networkID]?.recordFailure(at: now, probe: probe)
            case .abandoned: shared.breakers[networkID]?.recordAbandoned(probe: probe)
            }
            return (before, shared.breakers[networkID]?.state)
        }
        if let after, Self.phase(before) != Self.phase(after) { breakerChanged(networkID, to: after) }
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
    /// line won, its timeout passed) is cancelled through its own ``ChildCancellation``; the group then waits for it to return,
    /// which a conforming adapter does within 100 ms (the kit's rule). Every fill that is not delivered is
    /// invalidated. Returns true when the caller cancelled.
    private func drive(
        _ machine: inout WaterfallStateMachine,
        request: AdRequest,
        format: AdFormat,
        lines: [WaterfallLine],
        deadline: AdInstant,
        tracer: any Tracer
    ) async -> Bool {
        var state = machine
        let cancelled = await withTaskGroup(of: Input.self, returning: Bool.self) { group in
            var lineCancellations: [Int: ChildCancellation] = [:]
            var admissions: [Int: CircuitBreaker.Admission] = [:]
            var timer: (at: AdInstant, generation: UInt64, cancellation: ChildCancellation)?
            var timerGeneration: UInt64 = 0
            var callerCancelled = false
            let watcher = Latch()
            group.addTask {
                await watcher.wait()
                return Task.isCancelled ? .callerCancelled : .watcherStopped
            }

            func perform(_ actions: [WaterfallStateMachine.Action]) {
                var queue = actions[...]
                while let action = queue.popFirst() {
                    switch action {
                    case .start(let index):
                        let line = lines[index]
                        let admission = shared.withLock { $0.breakers[line.network]?.admit(at: clock.now) ?? .allowed }
                        if admission == .probe { breakerChanged(line.network, to: .halfOpen(probing: true)) }
                        if admission == .rejected {
                            queue.append(contentsOf: state.skip(index, reason: .breakerOpen, at: clock.now))
                            continue
                        }
                        guard let network = networks[line.network] else { continue }
                        admissions[index] = admission
                        var lineRequest = request
                        lineRequest.placement = line.placement
                        lineRequest.format = format
                        lineRequest.timeout = min(line.timeout, deadline - clock.now)
                        lineRequest.floorEcpm = line.floorEcpm
                        let cancellation = ChildCancellation()
                        lineCancellations[index] = cancellation
                        group.addTask {
                            .answer(
                                index,
                                await cancellation.run {
                                    await Self.tracedLoad(lineRequest, from: network, tracer: tracer)
                                })
                        }
                    case .cancel(let index):
                        lineCancellations[index]?.cancel()
                    case .invalidate(let ad):
                        ad.invalidate()
                    case .breaker(let index, let event):
                        recordBreaker(lines[index].network, probe: admissions[index] == .probe, event)
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

            perform(state.begin(at: clock.now))
            armTimer()
            while !state.isFinished, let input = await group.next() {
                let now = clock.now
                // The caller's cancellation reaches the lines at once; it is seen here before any of their answers.
                if !callerCancelled, Task.isCancelled {
                    callerCancelled = true
                    perform(state.cancelAll(at: now))
                    if state.isFinished { break }
                }
                switch input {
                case .answer(let index, let result):
                    lineCancellations[index] = nil
                    perform(state.answer(index, result, at: now))
                case .tick(let generation):
                    guard generation == timer?.generation else { continue }
                    timer = nil
                    perform(state.advance(to: now))
                case .callerCancelled:
                    if !callerCancelled {
                        callerCancelled = true
                        perform(state.cancelAll(at: now))
                    }
                case .timerStopped, .watcherStopped:
                    continue
                }
                if state.isFinished { break }
                armTimer()
            }
            // The waterfall is decided: stop the timer, the watcher and any line still running, then wait for them,
            // invalidating fills nobody will read.
            timer?.cancellation.cancel()
            watcher.fire()
            for cancellation in lineCancellations.values { cancellation.cancel() }
            for await input in group {
                if case .answer(_, .success(.filled(let ad))) = input { ad.invalidate() }
            }
            return callerCancelled
        }
        machine = state
        return cancelled
    }

    private static func phase(_ state: CircuitBreaker.State?) -> String {
        switch state {
        case .closed, nil: "closed"
        case .open: "open"
        case .halfOpen: "half_open"
        }
    }

    /// A breaker moved to another phase: a warning when it opens (a network is failing), info otherwise, and
    /// `admediation_breaker_transitions_total` by network and new phase.
    private func breakerChanged(_ networkID: String, to state: CircuitBreaker.State) {
        let phase = Self.phase(state)
        metrics.counter("admediation_breaker_transitions_total", [("network", networkID), ("state", phase)]).increment()
        if case .open = state {
            logger.warning("circuit breaker opened", metadata: ["network": "\(networkID)"])
        } else {
            logger.info("circuit breaker \(phase)", metadata: ["network": "\(networkID)"])
        }
    }

    /// Loads one line inside an `ad line` span, a child of the mediation span (the line runs in a child task, so the
    /// span's context — and any task-local value — reaches the adapter and its transport). Attributes: network, the
    /// line's placement, outcome (`fill`, `no_fill`, `error`), error code and eCPM.
    private static func tracedLoad(_ request: AdRequest, from network: any AdNetwork, tracer: any Tracer) async
        -> Result<AdLoadResult, AdError>
    {
        await tracer.withSpan("ad line", ofKind: .client) { span in
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
    private static func load(_ request: AdRequest, from network: any AdNetwork) async -> Result<AdLoadResult, AdError> {
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
private struct MediatedAdReporter: AdEventReporter {
    let inner: LoadedAd
    let onImpression: @Sendable (ImpressionRevenue) -> Void

    func report(_ event: AdEvent, for ad: LoadedAd) async throws {
        try await inner.report(event)
        if event == .impression { onImpression(ad.revenue) }
    }

    func invalidated(_ ad: LoadedAd) {
        inner.invalidate()
    }
}

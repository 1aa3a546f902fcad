import CoreMetrics
import Logging
import Tracing

/// Logs, metrics and span attributes of the mediator's decisions, impressions and breakers.
extension Mediator {
    /// The mediation span's attributes: placement, outcome, winner and its eCPM, duration, and each line's outcome
    /// as the trace has it (`network:outcome[:code]`, in line order) — the same facts as ``MediationTrace``.
    static func describe(_ outcome: MediationOutcome, placement: String, on span: any Span) {
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

    /// Logs the decision (info) and each line (debug), and records the metrics: per bid
    /// `admediation_bid_outcomes_total`
    /// (by network, outcome and auction result: `won`, `lost_<loss code>`, `none`) and `admediation_bid_latency`;
    /// `admediation_requests_total`,
    /// `admediation_fills_total` (by winning network), `admediation_no_fills_total`, `admediation_errors_total` (by
    /// code), `admediation_decision_latency`, and per line `admediation_line_latency` and
    /// `admediation_line_outcomes_total` (by outcome and error code). Dimensions: placement, network, outcome, code.
    func observe(_ outcome: MediationOutcome, placement: String) {
        let records = metrics.records
        let handles = records ? metrics.decisions(of: placement) : nil
        if let handles {
            handles.requests.increment()
            handles.decisionLatency.recordNanoseconds(outcome.trace.duration.nanosecondsClamped)
        }
        observeLines(outcome.trace.lines, placement: placement, handles: handles)
        if records { observeBids(outcome.trace.bids, placement: placement) }
        logDecision(outcome, placement: placement, handles: handles)
    }

    /// Per line: `admediation_line_outcomes_total` and `admediation_line_latency`, and a debug log line.
    private func observeLines(_ lines: [LineTrace], placement: String, handles: DecisionMetrics?) {
        let logsLines = logger.logLevel <= .debug
        // Nothing records metrics and nothing logs lines: nothing to build per line.
        guard handles != nil || logsLines else { return }
        for line in lines {
            var code = ""
            switch line.outcome {
            case .error(let error): code = error.code.name
            case .skipped(let reason): code = reason.rawValue
            case .timeout: code = "timeout"
            default: break
            }
            if let handles {
                handles.lineOutcome(network: line.network, outcome: line.outcome.name, code: code).increment()
                if let latency = line.latency {
                    handles.lineLatency(network: line.network).recordNanoseconds(latency.nanosecondsClamped)
                }
            }
            guard logsLines else { continue }
            var metadata: Logger.Metadata = [
                "placement": "\(placement)", "network": "\(line.network)", "line_placement": "\(line.placement)",
                "outcome": "\(line.outcome.name)",
            ]
            if !code.isEmpty { metadata["code"] = "\(code)" }
            if let latency = line.latency { metadata["latency_ms"] = "\(Int(latency.milliseconds.rounded()))" }
            logger.debug("line", metadata: metadata)
        }
    }

    /// Per bid: `admediation_bid_outcomes_total` (by auction result) and `admediation_bid_latency`.
    private func observeBids(_ bids: [BidTrace], placement: String) {
        for bid in bids {
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
    }

    /// The decision's info log line, and its fill, no-fill or error counter.
    private func logDecision(_ outcome: MediationOutcome, placement: String, handles: DecisionMetrics?) {
        // Formatted only when a log line is written.
        func milliseconds() -> String { "\(Int(outcome.trace.duration.milliseconds.rounded()))" }
        switch outcome.result {
        case .success(.filled(let ad)):
            handles?.fills(network: ad.networkID).increment()
            guard logger.logLevel <= .info else { return }
            var metadata: Logger.Metadata = [
                "placement": "\(placement)", "network": "\(ad.networkID)", "duration_ms": "\(milliseconds())",
            ]
            if let label = outcome.trace.abLabel { metadata["ab_label"] = "\(label)" }
            logger.info("filled", metadata: metadata)
        case .success(.noFill(let noFill)):
            handles?.noFills.increment()
            logger.info(
                "no fill",
                metadata: [
                    "placement": "\(placement)", "reason": "\(noFill.reason)", "duration_ms": "\(milliseconds())",
                ])
        case .failure(let error):
            handles?.errors(code: error.code.name).increment()
            logger.info(
                "failed",
                metadata: [
                    "placement": "\(placement)", "code": "\(error.code.name)", "duration_ms": "\(milliseconds())",
                ])
        }
    }

    /// An impression of a mediated ad: `admediation_impressions_total` and `admediation_impression_revenue_micros`
    /// (millionths of a US dollar), by placement, network and revenue precision (and A/B label when the placement has
    /// one), and an info log line with the revenue.
    func observeImpression(_ revenue: ImpressionRevenue) {
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

    static func phase(_ state: CircuitBreaker.State?) -> String {
        switch state {
        case .closed, nil: "closed"
        case .open: "open"
        case .halfOpen: "half_open"
        }
    }

    /// A breaker moved to another phase: a warning when it opens (a network is failing), info otherwise, and
    /// `admediation_breaker_transitions_total` by network and new phase.
    func breakerChanged(_ networkID: String, to state: CircuitBreaker.State) {
        let phase = Self.phase(state)
        metrics.counter("admediation_breaker_transitions_total", [("network", networkID), ("state", phase)]).increment()
        if case .open = state {
            logger.warning("circuit breaker opened", metadata: ["network": "\(networkID)"])
        } else {
            logger.info("circuit breaker \(phase)", metadata: ["network": "\(networkID)"])
        }
    }
}

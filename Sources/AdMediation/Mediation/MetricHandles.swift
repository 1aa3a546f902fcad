import CoreMetrics

/// The mediator's counters and timers, made once per label and dimensions and reused: swift-metrics handles are meant
/// to be kept, and making them per decision allocated a handle and its dimension array for every line of every
/// request. The dimensions come from the configuration (placements, networks) and from closed sets (outcomes,
/// error code names, skip reasons, revenue precisions), so the tables stop growing once each combination was seen;
/// the one open value, a request's unknown placement id, is why each table also stops at ``limit`` entries (handles
/// past it are made per use, as before).
package final class MetricHandles: Sendable {
    private struct Key: Hashable {
        var label: String
        var dimensions: [String]
    }

    /// The most handles kept per table.
    package static let limit = 10_000

    private let factory: any MetricsFactory
    private let counters = LockedValue<[Key: Counter]>([:])
    private let timers = LockedValue<[Key: CoreMetrics.Timer]>([:])
    private let placements = LockedValue<[String: DecisionMetrics]>([:])

    /// Whether handles record anything: false for swift-metrics' no-op factory (the default when no backend is
    /// bootstrapped), so callers can skip building dimensions that nothing would keep.
    package let records: Bool

    package init(factory: any MetricsFactory) {
        self.factory = factory
        self.records = !(factory is NOOPMetricsHandler)
    }

    package func counter(_ label: String, _ dimensions: [(String, String)] = []) -> Counter {
        let key = Key(label: label, dimensions: dimensions.flatMap { [$0.0, $0.1] })
        return counters.withLock { table in
            if let counter = table[key] { return counter }
            let counter = Counter(label: label, dimensions: dimensions, factory: factory)
            if table.count < Self.limit { table[key] = counter }
            return counter
        }
    }

    package func timer(_ label: String, _ dimensions: [(String, String)] = []) -> CoreMetrics.Timer {
        let key = Key(label: label, dimensions: dimensions.flatMap { [$0.0, $0.1] })
        return timers.withLock { table in
            if let timer = table[key] { return timer }
            let timer = CoreMetrics.Timer(label: label, dimensions: dimensions, factory: factory)
            if table.count < Self.limit { table[key] = timer }
            return timer
        }
    }
}

extension MetricHandles {
    /// The handles of one placement's decisions, kept per placement id (past ``limit`` placements, made per use).
    func decisions(of placement: String) -> DecisionMetrics {
        placements.withLock { table in
            if let handles = table[placement] { return handles }
            let handles = DecisionMetrics(placement: placement, factory: factory)
            if table.count < Self.limit { table[placement] = handles }
            return handles
        }
    }
}

/// One placement's decision metrics: the two handles every decision uses, made once, and tables of the handles that
/// depend on a line's network, outcome and code, or the winner and error code, each filled on first use (up to
/// ``MetricHandles/limit`` entries) — one short lookup per line instead of a label and dimension list hashed per
/// handle.
final class DecisionMetrics: Sendable {
    private struct LineKey: Hashable {
        var network: String
        var outcome: String
        var code: String
    }

    private struct Tables {
        var lineOutcomes: [LineKey: Counter] = [:]
        var lineLatencies: [String: CoreMetrics.Timer] = [:]
        var fills: [String: Counter] = [:]
        var errors: [String: Counter] = [:]
        var noFills: Counter?
    }

    let placement: String
    /// `admediation_requests_total`.
    let requests: Counter
    /// `admediation_decision_latency`.
    let decisionLatency: CoreMetrics.Timer
    private let factory: any MetricsFactory
    private let tables = LockedValue(Tables())

    init(placement: String, factory: any MetricsFactory) {
        self.placement = placement
        self.factory = factory
        requests = Counter(
            label: "admediation_requests_total", dimensions: [("placement", placement)], factory: factory)
        decisionLatency = CoreMetrics.Timer(
            label: "admediation_decision_latency", dimensions: [("placement", placement)], factory: factory)
    }

    /// `admediation_no_fills_total`, made on the first no fill (a placement that always fills exports none).
    var noFills: Counter {
        tables.withLock { tables in
            if let counter = tables.noFills { return counter }
            let counter = Counter(
                label: "admediation_no_fills_total", dimensions: [("placement", placement)], factory: factory)
            tables.noFills = counter
            return counter
        }
    }

    /// `admediation_line_outcomes_total` of a line's network, outcome and code.
    func lineOutcome(network: String, outcome: String, code: String) -> Counter {
        cached(\.lineOutcomes, LineKey(network: network, outcome: outcome, code: code)) {
            Counter(
                label: "admediation_line_outcomes_total",
                dimensions: [("placement", placement), ("network", network), ("outcome", outcome), ("code", code)],
                factory: factory)
        }
    }

    /// `admediation_line_latency` of a line's network.
    func lineLatency(network: String) -> CoreMetrics.Timer {
        cached(\.lineLatencies, network) {
            CoreMetrics.Timer(
                label: "admediation_line_latency", dimensions: [("placement", placement), ("network", network)],
                factory: factory)
        }
    }

    /// `admediation_fills_total` of the winning network.
    func fills(network: String) -> Counter {
        cached(\.fills, network) {
            Counter(
                label: "admediation_fills_total", dimensions: [("placement", placement), ("network", network)],
                factory: factory)
        }
    }

    /// `admediation_errors_total` of an error code.
    func errors(code: String) -> Counter {
        cached(\.errors, code) {
            Counter(
                label: "admediation_errors_total", dimensions: [("placement", placement), ("code", code)],
                factory: factory)
        }
    }

    private func cached<Key: Hashable, Handle: Sendable>(
        _ table: WritableKeyPath<Tables, [Key: Handle]>, _ key: Key, make: () -> Handle
    ) -> Handle {
        tables.withLock { tables in
            if let handle = tables[keyPath: table][key] { return handle }
            let handle = make()
            if tables[keyPath: table].count < MetricHandles.limit { tables[keyPath: table][key] = handle }
            return handle
        }
    }
}

import CoreMetrics
import Synchronization

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
    private let counters = Mutex<[Key: Counter]>([:])
    private let timers = Mutex<[Key: CoreMetrics.Timer]>([:])

    package init(factory: any MetricsFactory) {
        self.factory = factory
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

import AdMediation
import CoreMetrics
import Logging

/// The upstream client's telemetry as swift-metrics counters and log records. Opt in with
/// `MozAdsClientBuilder.telemetry(telemetry: MetricsMozAdsTelemetry())`: the builder's default, as in the seed, is a
/// no-op (``MarsFactory`` opts in for the mediator).
///
/// Counters, each dimensioned by the upstream label: `admediation_mars_cache_outcomes_total` (`outcome`: `hit`,
/// `miss_stored`, `miss_not_cacheable`, `no_cache`, `lookup_failed`, `store_failed`, `trim_failed`,
/// `cleanup_failed`), `admediation_mars_operations_total` and `admediation_mars_errors_total` (`operation`),
/// `admediation_mars_deserialization_errors_total` (`kind`) and `admediation_mars_cache_build_errors_total` (`kind`).
/// Failures are also logged as warnings (cache failures, client errors) or debug records (a dropped ad item), with the
/// upstream value cut to its first 200 characters (a server's error text can carry its whole answer).
public struct MetricsMozAdsTelemetry: MozAdsTelemetry {
    /// One counter per label and dimension, kept: a cache hit is a microseconds path.
    private let metrics: MetricHandles
    private let logger: Logger

    /// Records into `factory` (the app's `MetricsSystem` by default) and logs with `logger`.
    public init(factory: any MetricsFactory = MetricsSystem.factory, logger: Logger = Logger(label: "admediation.mars"))
    {
        self.metrics = MetricHandles(factory: factory)
        self.logger = logger
    }

    private static func excerpt(_ value: String) -> String {
        value.count <= 200 ? value : String(value.prefix(200)) + "…"
    }

    /// Counts `admediation_mars_cache_build_errors_total` and logs a warning: the cache is off.
    public func recordBuildCacheError(label: String, value: String) {
        metrics.counter("admediation_mars_cache_build_errors_total", [("kind", label)]).increment()
        logger.warning(
            "HTTP cache disabled: it could not be built",
            metadata: ["kind": "\(label)", "error": "\(Self.excerpt(value))"])
    }

    /// Counts `admediation_mars_errors_total` and logs a warning.
    public func recordClientError(label: String, value: String) {
        metrics.counter("admediation_mars_errors_total", [("operation", label)]).increment()
        logger.warning("operation failed", metadata: ["operation": "\(label)", "error": "\(Self.excerpt(value))"])
    }

    /// Counts `admediation_mars_operations_total`.
    public func recordClientOperationTotal(label: String) {
        metrics.counter("admediation_mars_operations_total", [("operation", label)]).increment()
    }

    /// Counts `admediation_mars_deserialization_errors_total` and logs at debug level.
    public func recordDeserializationError(label: String, value: String) {
        metrics.counter("admediation_mars_deserialization_errors_total", [("kind", label)]).increment()
        logger.debug("ad item dropped", metadata: ["kind": "\(label)", "error": "\(Self.excerpt(value))"])
    }

    /// Counts `admediation_mars_cache_outcomes_total`; a failed cache operation is also a warning.
    public func recordHttpCacheOutcome(label: String, value: String) {
        metrics.counter("admediation_mars_cache_outcomes_total", [("outcome", label)]).increment()
        if label.hasSuffix("_failed") {
            logger.warning(
                "HTTP cache operation failed", metadata: ["outcome": "\(label)", "error": "\(Self.excerpt(value))"])
        }
    }
}

import AdMediation
import AdMediationTesting
import CoreMetrics
import CurlTransport
import DemandSandbox
import Logging
import MARSAds
import MetricsTestKit
import TestSupport
import Testing

/// Captures what the process-wide default loggers (`Logger(label:)`, swift-log's `LoggingSystem`) emit inside
/// ``capturing(_:_:)``, per task. swift-log is bootstrapped once for the test process with a handler that behaves as
/// swift-log's default (stderr, level info) for every other task, so the other tests see no change.
enum TaskLogCapture {
    @TaskLocal static var current: LogCapture?

    private static let bootstrapped: Void = {
        LoggingSystem.bootstrap { label in Handler(label: label, fallback: StreamLogHandler.standardError(label: label))
        }
    }()

    /// Runs `body` with the default loggers' records (of this task and its child tasks) going to `capture`.
    static func capturing<T>(_ capture: LogCapture, _ body: () async throws -> T) async throws -> T {
        _ = bootstrapped
        return try await $current.withValue(capture, operation: body)
    }

    private struct Handler: LogHandler {
        let label: String
        var fallback: StreamLogHandler

        var metadata: Logger.Metadata {
            get { fallback.metadata }
            set { fallback.metadata = newValue }
        }
        var logLevel: Logger.Level {
            get { fallback.logLevel }
            set { fallback.logLevel = newValue }
        }
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { fallback[metadataKey: key] }
            set { fallback[metadataKey: key] = newValue }
        }

        func log(event: LogEvent) {
            guard let capture = TaskLogCapture.current else {
                fallback.log(event: event)
                return
            }
            capture.logger(label: label).log(
                level: event.level, event.message, metadata: event.metadata, source: event.source, file: event.file,
                function: event.function, line: event.line)
        }
    }
}

/// The seed: "`telemetry` … Optional telemetry instance for recording metrics. If not provided, a no-op implementation
/// is used" and "If no telemetry instance is provided, a no-op implementation is used and no metrics will be recorded."
@Suite("MARS telemetry is opt-in", .timeLimit(.minutes(1)))
struct DefaultTelemetryTests {
    /// What makes every kind of telemetry: a cache that cannot be built (a warning), a miss stored then a hit, and a
    /// request MARS refuses (400, a warning). `telemetry` nil builds the seed's way, without `.telemetry(telemetry:)`.
    static func exercise(_ sandbox: RunningSandbox, _ curl: CurlHTTPClient, telemetry: (any MozAdsTelemetry)?)
        async throws
    {
        func builder() -> MozAdsClientBuilder {
            let builder = MozAdsClientBuilder(httpClient: curl).environment(
                environment: .custom(baseURL: sandbox.marsBaseURL))
            return telemetry.map { builder.telemetry(telemetry: $0) } ?? builder
        }
        let broken = builder().cacheConfig(cacheConfig: MozAdsCacheConfig(dbPath: "  ")).build()
        #expect(!broken.isCacheEnabled)
        _ = try await broken.requestTileAds(mozAdRequests: tile1, options: nil)
        let client = builder().cacheConfig(cacheConfig: MozAdsCacheConfig(dbPath: tempDB())).build()
        _ = try await client.requestTileAds(mozAdRequests: tile1, options: nil)
        _ = try await client.requestTileAds(mozAdRequests: tile1, options: nil)
        await #expect(throws: AdError.self) {
            _ = try await client.requestTileAds(
                mozAdRequests: [MozAdsPlacementRequest(placementId: "not_a_placement", iabContent: nil)], options: nil)
        }
        #expect(sandbox.records.requestCounts["POST /mars/v1/ads"] == 3, "the hit made no request; the others did")
    }

    @Test func withoutATelemetryInstanceNoMetricsAreRecordedAndNothingIsLogged() async throws {
        let metrics = TestMetrics()
        let logs = LogCapture()
        try await DemandSandbox.withSandbox { sandbox in
            try await withCurlHTTPClient { curl in
                try await TaskLogCapture.capturing(logs) {
                    try await withMetricsFactory(metrics) {
                        try await Self.exercise(sandbox, curl, telemetry: nil)
                    }
                }
            }
        }
        #expect(metrics.counters.map { "\($0.label) \($0.dimensions)" } == [])
        #expect(metrics.recorders.isEmpty && metrics.timers.isEmpty && metrics.meters.isEmpty)
        #expect(logs.all.map { "\($0.level) \($0.message)" } == [])
    }

    @Test func anOptedInTelemetryRecordsMetricsAndLogsWarnings() async throws {
        let metrics = TestMetrics()
        let logs = LogCapture()
        let telemetry = MetricsMozAdsTelemetry(factory: metrics, logger: logs.logger(label: "admediation.mars"))
        try await DemandSandbox.withSandbox { sandbox in
            try await withCurlHTTPClient { curl in
                try await Self.exercise(sandbox, curl, telemetry: telemetry)
            }
        }
        #expect(
            metrics.counterTotal(label: "admediation_mars_operations_total", dimensions: [("operation", "new")]) == 2)
        #expect(
            metrics.counterTotal(label: "admediation_mars_operations_total", dimensions: [("operation", "request_ads")])
                == 3)
        #expect(
            metrics.counterTotal(label: "admediation_mars_errors_total", dimensions: [("operation", "request_ads")])
                == 1)
        #expect(
            metrics.counterTotal(
                label: "admediation_mars_cache_build_errors_total", dimensions: [("kind", "empty_db_path")])
                == 1)
        #expect(
            metrics.counterTotal(label: "admediation_mars_cache_outcomes_total", dimensions: [("outcome", "hit")]) == 1)
        #expect(
            logs.all.filter { $0.level == .warning }.map(\.message) == [
                "HTTP cache disabled: it could not be built", "operation failed",
            ])
    }
}

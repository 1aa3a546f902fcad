import AdMediation
import AdStorage
import AdTransport
import AdapterKit
import AdapterSupport
import Crypto
import Foundation
import ObliviousHTTP

/// Builds a ``MozAdsClient``. The seed's spelling compiles as written, with the HTTP client as the one extra argument:
///
/// ```swift
/// let client = MozAdsClientBuilder(httpClient: http)
///     .environment(environment: .prod)
///     .cacheConfig(cacheConfig: cache)
///     .telemetry(telemetry: telemetry)
///     .build()
/// ```
public struct MozAdsClientBuilder: Sendable {
    var environment: MozAdsEnvironment = .prod
    var cacheConfig: MozAdsCacheConfig?
    var telemetry: any MozAdsTelemetry = NoOpMozAdsTelemetry()
    var contextIDProvider: (any MozAdsContextIDProvider)?
    var http: any HTTPClient
    var now: @Sendable () -> Date = { Date() }
    var ohttpChannel: (relayURL: String, keyConfigurationURL: String)?

    /// A builder with the seed's defaults — prod, no cache, no telemetry ("If not provided, a no-op implementation is
    /// used": nothing is counted or logged until ``telemetry(telemetry:)`` is given one, e.g.
    /// ``MetricsMozAdsTelemetry``), rotating context id — over `http`. The HTTP client is required here rather than
    /// checked at `build()`, so a builder without one cannot compile (the seed's `MozAdsClientBuilder()` gets the
    /// client it needs as its one argument).
    public init(httpClient http: any HTTPClient) { self.http = http }

    /// Sets the MARS environment (the seed's `environment(environment:)`). Default ``MozAdsEnvironment/prod``.
    public func environment(environment: MozAdsEnvironment) -> Self {
        var b = self
        b.environment = environment
        return b
    }
    /// Sets the MARS environment; the same as ``environment(environment:)``.
    public func environment(_ environment: MozAdsEnvironment) -> Self {
        self.environment(environment: environment)
    }
    /// Enables the SQLite cache (the seed's `cacheConfig(cacheConfig:)`). Without it, caching is disabled entirely.
    public func cacheConfig(cacheConfig: MozAdsCacheConfig) -> Self {
        var b = self
        b.cacheConfig = cacheConfig
        return b
    }
    /// Enables the SQLite cache; the same as ``cacheConfig(cacheConfig:)``.
    public func cacheConfig(_ config: MozAdsCacheConfig) -> Self {
        cacheConfig(cacheConfig: config)
    }
    /// Sets the telemetry implementation (the seed's `telemetry(telemetry:)`). Without one, nothing is recorded.
    public func telemetry(telemetry: any MozAdsTelemetry) -> Self {
        var b = self
        b.telemetry = telemetry
        return b
    }
    /// Sets the telemetry implementation; the same as ``telemetry(telemetry:)``.
    public func telemetry(_ telemetry: any MozAdsTelemetry) -> Self {
        self.telemetry(telemetry: telemetry)
    }
    /// Replaces the default rotating context id.
    public func contextIDProvider(_ provider: any MozAdsContextIDProvider) -> Self {
        var b = self
        b.contextIDProvider = provider
        return b
    }
    /// Replaces the HTTP client to send through.
    public func httpClient(_ http: any HTTPClient) -> Self {
        var b = self
        b.http = http
        return b
    }
    /// The wall clock (cache times and context-id age); tests inject one.
    public func wallClock(_ now: @escaping @Sendable () -> Date) -> Self {
        var b = self
        b.now = now
        return b
    }
    /// Configures Oblivious HTTP (RFC 9458) for requests and callbacks made with `ohttp: true`: the encapsulated
    /// request goes to `relayURL`, the gateway's key configuration is fetched from `keyConfigurationURL`. Without it,
    /// such calls fail with `ohttpNotConfigured` and nothing is sent; with it, they never fall back to direct HTTP.
    public func ohttp(relayURL: String, keyConfigurationURL: String) -> Self {
        var b = self
        b.ohttpChannel = (relayURL, keyConfigurationURL)
        return b
    }

    /// Builds the client. A bad cache configuration disables the cache and reports `recordBuildCacheError`;
    /// it never fails the build. Nothing is opened here: the cache's SQLite file is opened by the first request
    /// that uses it, off the calling thread; a file that cannot be opened is then reported the same way
    /// (`database_error`) and the cache disabled (``MozAdsClient/isCacheEnabled`` turns false).
    public func build() -> MozAdsClient {
        var cache: MarsHTTPCache?
        if let cacheConfig {
            let telemetry = self.telemetry
            let reportOpenFailure: @Sendable (MarsHTTPCache.BuildFailure) -> Void = {
                telemetry.recordBuildCacheError(label: $0.label, value: $0.message)
            }
            switch MarsHTTPCache.make(cacheConfig, onOpenFailure: reportOpenFailure) {
            case .success(let built): cache = built
            case .failure(let failure): telemetry.recordBuildCacheError(label: failure.label, value: failure.message)
            }
        }
        let lane = BackgroundSender(clock: SystemAdClock(), limits: RotatingContextID.deleteLimits)
        let provider =
            contextIDProvider ?? RotatingContextID(environment: environment, http: http, now: now, sender: lane)
        telemetry.recordClientOperationTotal(label: "new")
        let relay = ohttpChannel.map {
            ObliviousHTTPRelayClient(
                relayURL: $0.relayURL, keyConfigurationURL: $0.keyConfigurationURL, transport: http)
        }
        return MozAdsClient(
            environment: environment, cache: cache, telemetry: telemetry, contextID: provider, http: http, ohttp: relay,
            now: now, background: lane)
    }
}

import AdMediation

/// Builds ``MarsNetwork``s from a configuration file: optional `cache_path` (the SQLite HTTP cache), `cache_ttl_s`
/// (1 s … 7 days) and `cache_max_mib` (1 … 100), and `ohttp` (`{"relay": URL, "config": URL}`: every ad request and
/// callback through that Oblivious HTTP relay).
public enum MarsFactory: AdNetworkFactory {
    /// `mars`.
    public static let type = "mars"
    /// Tiles, sponsored stories and images.
    public static let formats: Set<AdFormat.Kind> = [.tile, .spoc, .image]
    /// `cache_path`, `cache_ttl_s`, `cache_max_mib`, `ohttp.relay`, `ohttp.config`.
    public static let settingKeys: Set<String> = [
        "cache_path", "cache_ttl_s", "cache_max_mib", "ohttp.relay", "ohttp.config",
    ]

    /// The cache numbers are in range; an `ohttp` object has both URLs.
    public static func validate(_ settings: NetworkSettings) throws(AdError) {
        _ = try settings.wholeNumber("cache_ttl_s", in: 1...604_800)
        _ = try settings.wholeNumber("cache_max_mib", in: 1...100)
        if settings["ohttp.relay"] != nil || settings["ohttp.config"] != nil {
            for part in ["ohttp.relay", "ohttp.config"] where try settings.absoluteURL(part) == nil {
                throw AdError(.configuration, "\(settings.path).\(part): required, an absolute URL")
            }
        }
    }

    /// A ``MarsNetwork`` over a `MozAdsClient` with the configured cache and OHTTP mode, recording its telemetry as
    /// swift-metrics counters and logs (``MetricsMozAdsTelemetry``).
    public static func make(_ settings: NetworkSettings, context: AdNetworkFactoryContext) throws(AdError)
        -> any AdNetwork
    {
        try validate(settings)
        // The mediator opts in to telemetry (the builder's default records nothing): the counters are part of the
        // library's documented metrics, and swift-metrics / swift-log cost nothing until the app bootstraps them.
        var builder = MozAdsClientBuilder(httpClient: context.http).environment(.custom(baseURL: settings.baseURL))
            .telemetry(MetricsMozAdsTelemetry())
        if let path = settings["cache_path"] {
            builder = builder.cacheConfig(
                MozAdsCacheConfig(
                    dbPath: path,
                    defaultCacheTtlSeconds: try settings.wholeNumber("cache_ttl_s", in: 1...604_800).map(UInt64.init),
                    maxSizeMib: try settings.wholeNumber("cache_max_mib", in: 1...100).map(UInt64.init)))
        }
        let ohttp = settings["ohttp.relay"].flatMap { relay in settings["ohttp.config"].map { (relay, $0) } }
        if let (relay, config) = ohttp { builder = builder.ohttp(relayURL: relay, keyConfigurationURL: config) }
        return MarsNetwork(id: settings.id, client: builder.build(), clock: context.clock, ohttp: ohttp != nil)
    }
}

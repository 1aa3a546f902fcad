import AdMediation
import AdapterKit

/// Builds ``MarsNetwork``s from a configuration file: optional `cache_path` (the SQLite HTTP cache), `cache_ttl_s`
/// (1 s … 7 days) and `cache_max_mib` (1 … 100), and `ohttp` (`{"relay": URL, "config": URL}`: every ad request and
/// callback through that Oblivious HTTP relay).
public enum MarsFactory: AdNetworkFactory {
    /// `mars`.
    public static let type = "mars"
    /// Tiles, sponsored stories and images.
    public static let formats: Set<AdFormat.Kind> = [.tile, .spoc, .image]

    /// A MARS network's settings, all optional.
    public struct Settings: AdNetworkSettings, Hashable {
        /// The SQLite file of the HTTP cache (`cache_path`); without it, no cache.
        public var cachePath: String?
        /// The cache's default TTL in seconds, 1 … 604 800 (`cache_ttl_s`).
        public var cacheTTLSeconds: Int?
        /// The cache's size in MiB, 1 … 100 (`cache_max_mib`).
        public var cacheMaxMiB: Int?
        /// Oblivious HTTP: every ad request and callback through this relay (`ohttp`).
        public var ohttp: OHTTP?

        /// `{"relay": URL, "config": URL}`: the relay and the gateway's key configuration, both absolute URLs.
        public struct OHTTP: Decodable, Sendable, Hashable {
            /// The relay's URL (`relay`).
            public var relay: String
            /// The gateway key configuration's URL (`config`).
            public var config: String

            /// Creates OHTTP settings.
            public init(relay: String, config: String) {
                self.relay = relay
                self.config = config
            }

            enum CodingKeys: String, CodingKey, CaseIterable { case relay, config }

            /// Decodes both URLs; any other key is refused, naming the nearest. When the decoder collects problems,
            /// each is recorded, not only the first.
            public init(from decoder: any Decoder) throws {
                try decoder.rejectUnknownKeys(CodingKeys.self)
                let c = try decoder.container(keyedBy: CodingKeys.self)
                relay = try decoder.collecting("") { try c.decodeURLSetting(forKey: .relay, required: true) ?? "" }
                config = try decoder.collecting("") { try c.decodeURLSetting(forKey: .config, required: true) ?? "" }
            }
        }

        /// Creates settings.
        public init(cachePath: String? = nil, cacheTTLSeconds: Int? = nil, cacheMaxMiB: Int? = nil, ohttp: OHTTP? = nil)
        {
            self.cachePath = cachePath
            self.cacheTTLSeconds = cacheTTLSeconds
            self.cacheMaxMiB = cacheMaxMiB
            self.ohttp = ohttp
        }

        /// The keys: `cache_path`, `cache_ttl_s`, `cache_max_mib`, `ohttp`.
        public enum Key: String, CodingKey, CaseIterable {
            /// `cache_path`.
            case cachePath = "cache_path"
            /// `cache_ttl_s`.
            case cacheTTLSeconds = "cache_ttl_s"
            /// `cache_max_mib`.
            case cacheMaxMiB = "cache_max_mib"
            /// `ohttp`.
            case ohttp
        }

        /// Decodes the settings, checking the cache numbers' ranges and the OHTTP URLs. When the decoder collects
        /// problems (the configuration file's reading), each setting's is recorded, not only the first.
        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: Key.self)
            cachePath = try decoder.collecting(nil) { try c.decodeSettingText(forKey: .cachePath) }
            cacheTTLSeconds = try decoder.collecting(nil) {
                try c.decodeWholeSetting(forKey: .cacheTTLSeconds, in: 1...604_800)
            }
            cacheMaxMiB = try decoder.collecting(nil) { try c.decodeWholeSetting(forKey: .cacheMaxMiB, in: 1...100) }
            ohttp = try decoder.collecting(nil) { try c.decodeIfPresent(OHTTP.self, forKey: .ohttp) }
        }
    }

    /// A ``MarsNetwork`` over a `MozAdsClient` with the configured cache and OHTTP mode, recording its telemetry as
    /// swift-metrics counters and logs (``MetricsMozAdsTelemetry``).
    public static func make(_ network: NetworkConfiguration<Settings>, context: AdNetworkFactoryContext)
        throws(AdError) -> BuiltNetwork
    {
        let settings = network.settings
        // The mediator opts in to telemetry (the builder's default records nothing): the counters are part of the
        // library's documented metrics, and swift-metrics / swift-log cost nothing until the app bootstraps them.
        var builder = MozAdsClientBuilder(httpClient: context.http).environment(.custom(baseURL: network.baseURL))
            .telemetry(MetricsMozAdsTelemetry())
        if let path = settings.cachePath {
            builder = builder.cacheConfig(
                MozAdsCacheConfig(
                    dbPath: path, defaultCacheTtlSeconds: settings.cacheTTLSeconds.flatMap(UInt64.init(exactly:)),
                    maxSizeMib: settings.cacheMaxMiB.flatMap(UInt64.init(exactly:))))
        }
        if let ohttp = settings.ohttp {
            builder = builder.ohttp(relayURL: ohttp.relay, keyConfigurationURL: ohttp.config)
        }
        return BuiltNetwork(
            MarsNetwork(id: network.id, client: builder.build(), clock: context.clock, ohttp: settings.ohttp != nil))
    }
}

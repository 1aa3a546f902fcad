import AdMediation

/// Builds ``AppOpenNetwork``s from a configuration file: `{"type": "appopen", "base_url": …}`.
public enum AppOpenFactory: AdNetworkFactory {
    /// `appopen`.
    public static let type = "appopen"
    /// App-open ads.
    public static let formats: Set<AdFormat.Kind> = [.appOpen]
    /// No settings beyond the base URL.
    public static let settingKeys: Set<String> = []

    /// An ``AppOpenNetwork`` with the configured id.
    public static func make(_ settings: NetworkSettings, context: AdNetworkFactoryContext) throws(AdError)
        -> any AdNetwork
    {
        var configuration = AppOpenNetwork.Configuration(baseURL: settings.baseURL)
        configuration.id = settings.id
        return AppOpenNetwork(configuration: configuration, http: context.http, clock: context.clock)
    }
}

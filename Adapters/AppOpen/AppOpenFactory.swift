import AdMediation
import AdapterKit

/// Builds ``AppOpenNetwork``s from a configuration file: `{"type": "appopen", "base_url": …}`.
public enum AppOpenFactory: AdNetworkFactory {
    /// `appopen`.
    public static let type = "appopen"
    /// App-open ads.
    public static let formats: Set<AdFormat.Kind> = [.appOpen]

    /// An ``AppOpenNetwork`` with the configured id (no settings beyond the base URL).
    public static func make(_ network: NetworkConfiguration<NoNetworkSettings>, context: AdNetworkFactoryContext)
        throws(AdError) -> BuiltNetwork
    {
        var configuration = AppOpenNetwork.Configuration(baseURL: network.baseURL)
        configuration.id = network.id
        return BuiltNetwork(AppOpenNetwork(configuration: configuration, http: context.http, clock: context.clock))
    }
}

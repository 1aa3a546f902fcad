import AdMediation

/// Builds ``ChartboostNetwork``s from a configuration file: `app_id` and `app_signature` (the HMAC key, a secret) are
/// required.
public enum ChartboostFactory: AdNetworkFactory {
    /// `chartboost`.
    public static let type = "chartboost"
    /// Banners.
    public static let formats: Set<AdFormat.Kind> = [.banner]
    /// `app_id`, `app_signature`.
    public static let settingKeys: Set<String> = ["app_id", "app_signature"]

    /// Both settings are present.
    public static func validate(_ settings: NetworkSettings) throws(AdError) {
        _ = try settings.required("app_id")
        _ = try settings.required("app_signature")
    }

    /// A ``ChartboostNetwork`` with the configured id.
    public static func make(_ settings: NetworkSettings, context: AdNetworkFactoryContext) throws(AdError)
        -> any AdNetwork
    {
        var configuration = ChartboostNetwork.Configuration(
            baseURL: settings.baseURL, appID: try settings.required("app_id"),
            appSignature: try settings.required("app_signature"))
        configuration.id = settings.id
        return ChartboostNetwork(configuration: configuration, http: context.http, clock: context.clock)
    }
}

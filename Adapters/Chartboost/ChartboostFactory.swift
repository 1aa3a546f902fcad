import AdMediation
import AdapterKit

/// Builds ``ChartboostNetwork``s from a configuration file: `app_id` and `app_signature` (the HMAC key, a secret) are
/// required.
public enum ChartboostFactory: AdNetworkFactory {
    /// `chartboost`.
    public static let type = "chartboost"
    /// Banners.
    public static let formats: Set<AdFormat.Kind> = [.banner]
    /// ``ChartboostNetwork/sizes``: the three sizes the spec defines.
    public static var bannerSizes: [BannerSize]? { ChartboostNetwork.sizes }

    /// A Chartboost network's settings: `app_id` and `app_signature`, both required and non-empty.
    public struct Settings: AdNetworkSettings, Hashable {
        /// The app's id (`app_id`).
        public var appID: String
        /// The app's signature, the HMAC key (`app_signature`): a secret, never printed.
        public var appSignature: String

        /// Creates settings.
        public init(appID: String, appSignature: String) {
            self.appID = appID
            self.appSignature = appSignature
        }

        /// The keys: `app_id`, `app_signature`.
        public enum Key: String, CodingKey, CaseIterable {
            /// `app_id`.
            case appID = "app_id"
            /// `app_signature`.
            case appSignature = "app_signature"
        }

        /// Decodes both settings (a missing or empty one: `required for type chartboost`). When the decoder
        /// collects problems (the configuration file's reading), both are recorded, not only the first.
        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: Key.self)
            appID = try decoder.collecting("") {
                try c.decodeRequiredSetting(forKey: .appID, type: ChartboostFactory.type)
            }
            appSignature = try decoder.collecting("") {
                try c.decodeRequiredSetting(forKey: .appSignature, type: ChartboostFactory.type)
            }
        }
    }

    /// A ``ChartboostNetwork`` with the configured id.
    public static func make(_ network: NetworkConfiguration<Settings>, context: AdNetworkFactoryContext)
        throws(AdError) -> BuiltNetwork
    {
        var configuration = ChartboostNetwork.Configuration(
            baseURL: network.baseURL, appID: network.settings.appID, appSignature: network.settings.appSignature)
        configuration.id = network.id
        return BuiltNetwork(ChartboostNetwork(configuration: configuration, http: context.http, clock: context.clock))
    }
}

import AdMediation
import AdapterKit

/// Builds ``BiddingNetwork``s from a configuration file: optional `app_bundle`, `app_id` and `auction`
/// (`first_price`, the default, or `second_price`: the `at` its requests announce).
public enum OpenRTBFactory: AdNetworkFactory {
    /// `openrtb`.
    public static let type = "openrtb"
    /// Banners, interstitials and rewarded ads.
    public static let formats: Set<AdFormat.Kind> = [.banner, .interstitial, .rewarded]

    /// A bidder's settings: `app_bundle`, `app_id` and `auction`, all optional.
    public struct Settings: AdNetworkSettings, Hashable {
        /// The app's `app.bundle` in bid requests (default: the bidder configuration's).
        public var appBundle: String?
        /// The app's `app.id` in bid requests.
        public var appID: String?
        /// The auction type its requests announce (default: the bidder configuration's, first price).
        public var auction: AuctionType?

        /// Creates settings.
        public init(appBundle: String? = nil, appID: String? = nil, auction: AuctionType? = nil) {
            self.appBundle = appBundle
            self.appID = appID
            self.auction = auction
        }

        /// The keys: `app_bundle`, `app_id`, `auction`.
        public enum Key: String, CodingKey, CaseIterable {
            /// `app_bundle`.
            case appBundle = "app_bundle"
            /// `app_id`.
            case appID = "app_id"
            /// `auction`.
            case auction
        }

        /// Decodes the settings; `auction` must be `first_price` or `second_price`. When the decoder collects
        /// problems (the configuration file's reading), each setting's is recorded, not only the first.
        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: Key.self)
            appBundle = try decoder.collecting(nil) { try c.decodeSettingText(forKey: .appBundle) }
            appID = try decoder.collecting(nil) { try c.decodeSettingText(forKey: .appID) }
            auction = try decoder.collecting(nil) {
                try c.decodeSettingText(forKey: .auction).map { text in
                    guard let auction = AuctionType(rawValue: text) else {
                        throw DecodingError.dataCorruptedError(
                            forKey: .auction, in: c,
                            debugDescription: "must be first_price or second_price, got \"\(text.prefix(40))\"")
                    }
                    return auction
                }
            }
        }
    }

    /// A ``BiddingNetwork`` with the configured id.
    public static func make(_ network: NetworkConfiguration<Settings>, context: AdNetworkFactoryContext)
        throws(AdError) -> BuiltNetwork
    {
        var configuration = BiddingNetwork.Configuration(baseURL: network.baseURL)
        configuration.id = network.id
        if let bundle = network.settings.appBundle { configuration.appBundle = bundle }
        configuration.appID = network.settings.appID
        if let auction = network.settings.auction { configuration.auction = auction }
        return BuiltNetwork(BiddingNetwork(configuration: configuration, http: context.http, clock: context.clock))
    }
}

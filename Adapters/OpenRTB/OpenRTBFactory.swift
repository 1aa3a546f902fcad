import AdMediation

/// Builds ``BiddingNetwork``s from a configuration file: optional `app_bundle`, `app_id` and `auction`
/// (`first_price`, the default, or `second_price`: the `at` its requests announce).
public enum OpenRTBFactory: AdNetworkFactory {
    /// `openrtb`.
    public static let type = "openrtb"
    /// Banners, interstitials and rewarded ads.
    public static let formats: Set<AdFormat.Kind> = [.banner, .interstitial, .rewarded]
    /// `app_bundle`, `app_id`, `auction`.
    public static let settingKeys: Set<String> = ["app_bundle", "app_id", "auction"]

    /// Checks that `auction`, when present, is `first_price` or `second_price`.
    public static func validate(_ settings: NetworkSettings) throws(AdError) {
        _ = try auction(settings)
    }

    /// A ``BiddingNetwork`` with the configured id.
    public static func make(_ settings: NetworkSettings, context: AdNetworkFactoryContext) throws(AdError)
        -> any AdNetwork
    {
        var configuration = BiddingNetwork.Configuration(baseURL: settings.baseURL)
        configuration.id = settings.id
        if let bundle = settings["app_bundle"] { configuration.appBundle = bundle }
        configuration.appID = settings["app_id"]
        if let auction = try auction(settings) { configuration.auction = auction }
        return BiddingNetwork(configuration: configuration, http: context.http, clock: context.clock)
    }

    /// Sends the bidder's queued notices and stops its sender.
    public static func shutdown(_ network: any AdNetwork) async {
        await (network as? BiddingNetwork)?.shutdown()
    }

    private static func auction(_ settings: NetworkSettings) throws(AdError) -> AuctionType? {
        guard let text = settings["auction"] else { return nil }
        guard let auction = AuctionType(rawValue: text) else {
            throw AdError(
                .configuration,
                "\(settings.path).auction: must be first_price or second_price, got \"\(text.prefix(40))\"")
        }
        return auction
    }
}

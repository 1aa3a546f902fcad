import AdMediation

/// Builds ``BiddingNetwork``s from a configuration file: optional `app_bundle` and `app_id`.
public enum OpenRTBFactory: AdNetworkFactory {
    /// `openrtb`.
    public static let type = "openrtb"
    /// Banners, interstitials and rewarded ads.
    public static let formats: Set<AdFormat.Kind> = [.banner, .interstitial, .rewarded]
    /// `app_bundle`, `app_id`.
    public static let settingKeys: Set<String> = ["app_bundle", "app_id"]

    /// A ``BiddingNetwork`` with the configured id.
    public static func make(_ settings: NetworkSettings, context: AdNetworkFactoryContext) throws(AdError)
        -> any AdNetwork
    {
        var configuration = BiddingNetwork.Configuration(baseURL: settings.baseURL)
        configuration.id = settings.id
        if let bundle = settings["app_bundle"] { configuration.appBundle = bundle }
        configuration.appID = settings["app_id"]
        return BiddingNetwork(configuration: configuration, http: context.http, clock: context.clock)
    }

    /// Sends the bidder's queued notices and stops its sender.
    public static func shutdown(_ network: any AdNetwork) async {
        await (network as? BiddingNetwork)?.shutdown()
    }
}

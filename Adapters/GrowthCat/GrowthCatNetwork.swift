import AdMediation
import Foundation

/// GrowthCat as an ``AdNetwork``: a request's placement is the placement key; `banner`, `interstitial` and
/// `rewarded` formats. eCPM comes from the ad when present. Events go through the client's durable queue.
public struct GrowthCatNetwork: AdNetwork {
    /// The network id.
    public let id: String
    /// Banners, interstitials and rewarded ads, priced when the server says.
    public let capabilities = AdNetworkCapabilities(
        formats: [.banner, .interstitial, .rewarded], reportsPrice: true)
    /// The client underneath.
    public let client: GrowthCatClient
    private let clock: any AdClock
    private let adTTL: Duration

    /// The GrowthCat ad behind a fill of this network (its close policy, reward and tracking), carried by the
    /// `LoadedAd` itself: each serve keeps its own `allocation_id` and `token`, however many times a creative is
    /// served.
    public func growthCatAd(for loaded: LoadedAd) -> GrowthCatAd? {
        guard loaded.networkID == id else { return nil }
        return loaded.adapterData as? GrowthCatAd
    }

    /// Wraps `client`; loaded ads expire after `adTTL` (default 1 hour, the full-screen norm).
    public init(
        id: String = "growthcat", client: GrowthCatClient, clock: any AdClock = SystemAdClock(),
        adTTL: Duration = .seconds(3600)
    ) {
        self.id = id
        self.client = client
        self.clock = clock
        self.adTTL = adTTL
    }

    /// Loads the placement's first servable ad.
    public func load(_ request: AdRequest) async throws -> AdLoadResult {
        let wanted: GrowthCatAdFormat
        switch request.format {
        case .banner: wanted = .banner
        case .interstitial, .rewarded: wanted = .interstitial
        default:
            throw AdError(.configuration, "GrowthCat serves banner, interstitial and rewarded, not \(request.format)")
        }
        // The privacy rules may forbid user ids (COPPA, under age, ATT, TCF profile purposes, US opt-outs) in the
        // catalog query and the events; the reward's validation carries the app's account id whatever they say (the
        // seed: "appUserID is required for rewarded ads"; the privacy article, "Rewards").
        let userID = request.privacy.effectivePermissions.userIDs ? request.userID : nil
        let rewardUserID = request.rewardUserID ?? request.userID
        // `request.timeout` bounds the whole load, retries included: each attempt's deadline is what is left of it,
        // put on the request by the client's `RequestRunner` and enforced by the HTTP client, which also ends the
        // transfer when the caller is cancelled.
        let ad = try await client.loadAd(
            placementKey: request.placement, format: wanted, appUserID: userID, sessionID: request.sessionID,
            privacy: request.privacy, timeout: request.timeout)
        if Task.isCancelled { throw AdError(.cancelled, "the load of \(request.placement) was cancelled") }
        guard let ad else { return .noFill(NoFill(reason: "no servable ad")) }
        if let format = ad.format, format != wanted {
            return .noFill(NoFill(reason: "format \(format.rawValue), wanted \(wanted.rawValue)"))
        }
        if request.format == .rewarded && !ad.isRewarded { return .noFill(NoFill(reason: "not a rewarded ad")) }
        var fields: [String: String] = [:]
        fields["headline"] = ad.headline
        fields["body"] = ad.body
        fields["layout"] = ad.layout
        fields["cta_text"] = ad.ctaText
        // App Store creatives: `overlay` (the seed's default) or `product_view`, for the app's StoreKit sheet.
        fields["store_presentation"] = ad.creativeType == "app_store" ? (ad.storePresentation ?? "overlay") : nil
        fields["local_asset_file"] = ad.localAssetFile?.path
        var creative = AdCreative(id: ad.creativeID, kind: ad.creativeType, assetURL: ad.assetURL, fields: fields)
        creative.disclosureLabel = ad.sponsoredLabel
        let now = clock.now
        return .filled(
            LoadedAd(
                networkID: id, placement: request.placement, format: request.format,
                creative: creative,
                ecpm: ad.ecpm.flatMap { $0.isFinite && $0 >= 0 ? $0 : nil }, loadedAt: now, expiresAt: now + adTTL,
                adapterData: ad,
                reporter: Reporter(
                    client: client, ad: ad, placementKey: request.placement, userID: userID,
                    sessionID: request.sessionID),
                fullScreenRules: GrowthCatFullScreenRules(
                    ad: ad, client: client, userID: rewardUserID, sessionID: request.sessionID)))
    }

    /// Every event goes to the client's durable queue: ``AdEventDelivery/queued`` once stored, never waiting for the
    /// network (the client's delivery loop sends it).
    private struct Reporter: AdEventReporter {
        let client: GrowthCatClient
        let ad: GrowthCatAd
        let placementKey: String
        let userID: String?
        let sessionID: String?

        /// `occurred_at` is the signal's moment: the wall time now, less the record's age.
        func deliver(_ record: AdEventRecord) async throws -> AdEventDelivery {
            let occurredAt = client.configuration.now().addingTimeInterval(-record.age.seconds)
            let event = record.event
            let name: GrowthCatAdEventName
            var metadata: [String: String] = [:]
            switch event {
            case .impression: name = .impression
            case .click: name = .click
            case .videoStart: name = .videoStart
            case .videoProgress(let percent):
                name = .videoProgress
                metadata["progress_pct"] = String(percent)
            case .videoComplete: name = .videoComplete
            case .closed: name = .adClosed
            case .reported(let reason):
                name = .adReported
                metadata["reason"] = reason
            }
            try await client.trackAdEvent(
                name, for: ad, placementKey: placementKey, appUserID: userID, sessionID: sessionID, metadata: metadata,
                occurredAt: occurredAt)
            return .queued
        }
    }
}

extension GrowthCatNetwork: BackgroundWork {
    /// The network's background work is its client's (the delivery loop, batch timer and offline probe): ends it
    /// (``GrowthCatClient/shutdown()``: a flush in progress finishes; queued events stay in the durable queue for the
    /// next run).
    public func shutdown() async { await client.shutdown() }
}

import AdMediation
import Foundation
import Synchronization

/// The GrowthCat ads behind recent fills, so presentation code can reach their close policy and reward.
final class ServedAds: Sendable {
    private let ads = Mutex<[String: GrowthCatAd]>([:])
    func remember(_ ad: GrowthCatAd) {
        ads.withLock { map in
            if map.count >= 512 { map.removeAll() }
            map[ad.creativeID] = ad
        }
    }
    func ad(creativeID: String) -> GrowthCatAd? { ads.withLock { $0[creativeID] } }
}

/// GrowthCat as an ``AdNetwork``: a request's placement is the placement key; `banner`, `interstitial` and
/// `rewarded` formats. eCPM comes from the ad when present. Events go through the client's durable queue.
public struct GrowthCatNetwork: AdNetwork {
    /// The network id.
    public let id: String
    /// Banners, interstitials and rewarded ads, priced when the server says.
    public let capabilities = AdNetworkCapabilities(formats: ["banner", "interstitial", "rewarded"], loadsWhileShowing: true, reportsPrice: true)
    /// The client underneath.
    public let client: GrowthCatClient
    private let clock: any AdClock
    private let adTTL: Duration
    private let served = ServedAds()

    /// The GrowthCat ad behind a fill of this network (its close policy, reward, tracking), while it is recent.
    public func growthCatAd(for loaded: LoadedAd) -> GrowthCatAd? {
        guard loaded.networkID == id else { return nil }
        return served.ad(creativeID: loaded.creative.id)
    }

    /// Wraps `client`; loaded ads expire after `adTTL` (default 1 hour, the full-screen norm).
    public init(id: String = "growthcat", client: GrowthCatClient, clock: any AdClock = SystemAdClock(), adTTL: Duration = .seconds(3600)) {
        self.id = id
        self.client = client
        self.clock = clock
        self.adTTL = adTTL
    }

    /// Loads the placement's first servable ad.
    public func load(_ request: AdRequest) async throws -> AdLoadResult {
        let wanted: String
        switch request.format {
        case .banner: wanted = "banner"
        case .interstitial, .rewarded: wanted = "interstitial"
        default: throw AdError(.configuration, "GrowthCat serves banner, interstitial and rewarded, not \(request.format)")
        }
        let client = client, clock = clock
        let ad: GrowthCatAd?
        do {
            // Structured: cancelling the caller, or the timeout firing, cancels the HTTP request underneath.
            ad = try await withThrowingTaskGroup(of: GrowthCatAd?.self) { group in
                group.addTask {
                    try await client.loadAd(placementKey: request.placement, appUserID: request.userID, sessionID: request.sessionID, privacy: request.privacy)
                }
                if let timeout = request.timeout {
                    group.addTask {
                        try await clock.sleep(for: timeout)
                        throw GrowthCatError(code: .network, message: "timeout: \(request.placement) did not load within \(Int(timeout.milliseconds)) ms")
                    }
                }
                defer { group.cancelAll() }
                return try await group.next()!
            }
        } catch let error as GrowthCatError {
            throw error.adError
        } catch is CancellationError {
            throw AdError(.cancelled, "the load of \(request.placement) was cancelled")
        }
        try Task.checkCancellation()
        guard let ad else { return .noFill(NoFill(reason: "no servable ad")) }
        if let format = ad.format, format != wanted { return .noFill(NoFill(reason: "format \(format), wanted \(wanted)")) }
        if request.format == .rewarded && !ad.isRewarded { return .noFill(NoFill(reason: "not a rewarded ad")) }
        served.remember(ad)
        var fields: [String: String] = [:]
        fields["headline"] = ad.headline
        fields["cta_text"] = ad.ctaText
        fields["store_presentation"] = ad.storePresentation
        let now = clock.now
        return .filled(LoadedAd(
            networkID: id, placement: request.placement, format: request.format,
            creative: AdCreative(id: ad.creativeID, kind: ad.creativeType, assetURL: ad.assetURL, fields: fields),
            ecpm: ad.ecpm.flatMap { $0.isFinite && $0 >= 0 ? $0 : nil }, loadedAt: now, expiresAt: now + adTTL,
            reporter: Reporter(client: client, ad: ad, placementKey: request.placement, userID: request.userID, sessionID: request.sessionID)))
    }

    private struct Reporter: AdEventReporter {
        let client: GrowthCatClient
        let ad: GrowthCatAd
        let placementKey: String
        let userID: String?
        let sessionID: String?

        func report(_ event: AdEvent, for loaded: LoadedAd) async throws {
            let name: GrowthCatAdEventName
            var metadata: [String: String] = [:]
            switch event {
            case .impression: name = .impression
            case .click: name = .click
            case .videoStart: name = .videoStart
            case .videoProgress(let percent): name = .videoProgress; metadata["progress_pct"] = String(percent)
            case .videoComplete: name = .videoComplete
            case .closed: name = .adClosed
            case .reported(let reason): name = .adReported; metadata["reason"] = reason
            }
            do {
                try await client.trackAdEvent(name, for: ad, placementKey: placementKey, appUserID: userID, sessionID: sessionID, metadata: metadata)
            } catch {
                throw error.adError
            }
        }
    }
}

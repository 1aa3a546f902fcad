import AdMediation
import Foundation

/// The ads part of the bootstrap.
public struct GrowthCatSDKAdsConfig: Sendable, Hashable {
    /// Master switch.
    public var adsEnabled: Bool
    /// Allowed formats (unknown names in the answer are ignored).
    public var formats: Set<GrowthCatAdFormat>
    /// Default catalog TTL; a response's tighter TTL wins.
    public var adCacheTTLSeconds: Int
    /// Offline queue cap (default 500).
    public var maxOfflineAdEvents: Int
}

/// The bootstrap from `GET /v1/sdk/config`.
public struct GrowthCatSDKBootstrap: Sendable, Hashable {
    /// The app id.
    public var appID: String
    /// `live`, `test`, …
    public var workspace: String
    /// Ads settings (disabled when the server sent none).
    public var adsConfig: GrowthCatSDKAdsConfig
}

/// GrowthCat's two placement formats (the seed's `AdFormat`). A rewarded ad is an interstitial with a reward.
public enum GrowthCatAdFormat: String, Sendable, Hashable, CaseIterable {
    /// An inline strip.
    case banner
    /// Full screen: image, video, rewarded or App Store (the server decides).
    case interstitial

    /// True for formats that take the whole screen (the seed: `self == .interstitial`).
    public var isFullScreen: Bool { self == .interstitial }
}

/// A servable ad (the AdObject of the contract).
public struct GrowthCatAd: Sendable, Hashable {
    /// Placement details, when served from a catalog.
    public struct Placement: Sendable, Hashable {
        /// The placement's server id (`placement.id`), when sent.
        public var id: String?
        /// Key.
        public var key: String
        /// Banner or interstitial (an ad whose placement names another format is not servable).
        public var format: GrowthCatAdFormat
        /// Rewarded.
        public var rewardEnabled: Bool
        /// Reward name.
        public var rewardName: String?
        /// Reward amount.
        public var rewardAmount: Double?
        /// Minimum seconds on screen before the reward.
        public var minimumViewSeconds: Double?
        /// Close allowed.
        public var isSkippable: Bool
        /// Close allowed after this many seconds.
        public var skippableAfterSeconds: Double?
    }

    /// Where the ad lives.
    public var placement: Placement?
    /// Campaign id.
    public var campaignID: String
    /// Campaign mode (`campaign.mode`, for example `paid` or `house`), when sent.
    public var campaignMode: String?
    /// Campaign objective (`campaign.objective`, for example `install`), when sent.
    public var campaignObjective: String?
    /// Campaign priority weight (`campaign.priority_weight`), when sent as a finite number ≥ 0.
    public var campaignPriorityWeight: Double?
    /// Creative id.
    public var creativeID: String
    /// `image`, `video` or `app_store`.
    public var creativeType: String
    /// The asset.
    public var assetURL: String
    /// Headline text.
    public var headline: String?
    /// Body text (`creative.body`).
    public var body: String?
    /// Layout hint for the renderer (`creative.layout`, for example `portrait`).
    public var layout: String?
    /// Call to action.
    public var ctaText: String?
    /// Video length.
    public var durationSeconds: Double?
    /// `overlay` or `product_view` for App Store creatives.
    public var storePresentation: String?
    /// App Store id for App Store creatives.
    public var appStoreID: String?
    /// Asset cache hints.
    public var assetCacheable: Bool
    /// Asset TTL override.
    public var assetTTLSeconds: Int?
    /// `prefetch` or `lazy`.
    public var assetStrategy: String?
    /// Tracking allocation.
    public var allocationID: String
    /// Tracking token.
    public var token: String
    /// Close policy.
    public var closeIsSkippable: Bool?
    /// Close policy.
    public var closeSkippableAfterSeconds: Double?
    /// Close policy.
    public var rewardGrantAfterSeconds: Double?
    /// Price, when sent.
    public var ecpm: Double?
    /// The catalog's default media TTL (`media_cache_ttl_seconds`).
    public var mediaCacheTTLSeconds: Int?
    /// The creative's file in the media cache when `loadAd` downloaded it before returning (strategy `prefetch`,
    /// media caching on, creative cacheable, download done within the load's time); else nil — render from
    /// ``assetURL`` or call ``GrowthCatClient/cacheCreative(for:)``.
    public var localAssetFile: URL?

    /// The placement's format (nil for ads from the format-based serve endpoint).
    public var format: GrowthCatAdFormat? { placement?.format }
    /// Rewarded ad.
    public var isRewarded: Bool { placement?.rewardEnabled == true }
    /// The disclosure every GrowthCat ad shows, banners included (the seed: "Every ad format shows a visible
    /// 'Sponsored' label — required by App Store policy").
    public var sponsoredLabel: String { "Sponsored" }
}

/// Events the app may fire (never `reward_validated`: the server records it).
public enum GrowthCatAdEventName: String, Sendable, Hashable, CaseIterable {
    /// Ad visible.
    case impression
    /// CTA tapped.
    case click
    /// Video started.
    case videoStart = "video_start"
    /// Video at 25/50/75 % (`progress_pct` metadata).
    case videoProgress = "video_progress"
    /// Video ended.
    case videoComplete = "video_complete"
    /// Ad closed.
    case adClosed = "ad_closed"
    /// Ad reported.
    case adReported = "ad_reported"

    /// Sent at once (one HTTP call) instead of batched.
    public var isImmediate: Bool { self == .impression || self == .click }
}

/// The answer of a reward validation.
public struct AdRewardValidationResponse: Sendable, Hashable {
    /// Grant the reward only when true.
    public var rewardValidated: Bool
    /// Accepted count.
    public var accepted: Int
    /// The reward, when validated.
    public var reward: (name: String, amount: Double)?
    /// Every attempt the validation took (more than one when a 5xx or a timeout was retried). Not compared.
    public var attempts: [GrowthCatRequestAttempt] = []

    /// Compares field by field.
    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.rewardValidated == rhs.rewardValidated && lhs.accepted == rhs.accepted
            && lhs.reward?.name == rhs.reward?.name && lhs.reward?.amount == rhs.reward?.amount
    }
    /// Hashes the fields.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(rewardValidated)
        hasher.combine(accepted)
        hasher.combine(reward?.name)
        hasher.combine(reward?.amount)
    }
}

/// Tells the client whether the device is online. Linux has no NWPathMonitor: the client also notices recovery
/// from its own successful requests and from a periodic probe.
public protocol ConnectivityMonitor: Sendable {
    /// `true` when connectivity returns, `false` when it is lost.
    var changes: AsyncStream<Bool> { get }
}

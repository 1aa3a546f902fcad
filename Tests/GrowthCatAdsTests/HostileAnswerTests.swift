import AdMediation
import AdNetworkConformance
import Foundation
import Testing

@testable import GrowthCatAds

/// A valid catalog with one rewarded video ad, every numeric field of the contract present.
let validCatalog = """
    {"cache_ttl_seconds": 300, "media_cache_ttl_seconds": 3600, "ads": [{
      "campaign": {"id": "c1"}, "ecpm": 4.5,
      "placement": {"key": "rewarded_coins", "format": "interstitial", "reward_enabled": true, "reward_name": "Coins",
                    "reward_amount": 50, "minimum_view_seconds": 15, "is_skippable": false, \
    "skippable_after_seconds": 5},
      "creative": {"id": "cr1", "creative_type": "video", "public_asset_url": "https://cdn.example/v.mp4", \
    "duration_seconds": 30,
                   "asset_cache": {"cacheable": true, "ttl_seconds": 600, "strategy": "prefetch"}},
      "close_policy": {"is_skippable": false, "skippable_after_seconds": 5, "reward_grant_after_seconds": 15},
      "tracking": {"allocation_id": "al1", "token": "tk1"}}]}
    """

/// Which outcome a hostile value must have for a field.
enum Expected { case clampedTo(Double), absent }

/// For a seconds/TTL field: huge values clamp to 7 days; negative, non-numeric, null and boolean values are absent.
func secondsExpectation(_ value: HostileJSON.Value) -> Expected {
    switch value.name {
    case "huge", "int64_max": .clampedTo(604_800)
    case "fraction": .clampedTo(0.5)
    default: .absent
    }
}

@Suite("GrowthCat answers with hostile numbers", .timeLimit(.minutes(2)))
struct GrowthCatHostileAnswerTests {
    static let adSecondsFields: [([String], @Sendable (GrowthCatAd) -> Double?)] = [
        (["ads", "0", "placement", "minimum_view_seconds"], { $0.placement?.minimumViewSeconds }),
        (["ads", "0", "placement", "skippable_after_seconds"], { $0.placement?.skippableAfterSeconds }),
        (["ads", "0", "creative", "duration_seconds"], { $0.durationSeconds }),
        (["ads", "0", "close_policy", "skippable_after_seconds"], { $0.closeSkippableAfterSeconds }),
        (["ads", "0", "close_policy", "reward_grant_after_seconds"], { $0.rewardGrantAfterSeconds }),
        (["ads", "0", "creative", "asset_cache", "ttl_seconds"], { $0.assetTTLSeconds.map(Double.init) }),
    ]

    @Test(arguments: 0..<6, HostileJSON.numeric)
    func adDurationsClampToSevenDaysOrAreIgnored(field: Int, value: HostileJSON.Value) throws {
        let (path, read) = Self.adSecondsFields[field]
        let body = try #require(HostileJSON.replacing(path, in: validCatalog, with: value))
        let (ads, _) = try GrowthCatClient.parseCatalog(body)
        let ad = try #require(ads.first, "the ad stays valid")
        switch secondsExpectation(value) {
        case .clampedTo(let expected):
            // Whole-second TTLs round down.
            #expect(read(ad) == (path.last == "ttl_seconds" ? expected.rounded(.down) : expected), "\(path) = \(value)")
        case .absent: #expect(read(ad) == nil, "\(path) = \(value)")
        }
    }

    @Test(arguments: ["cache_ttl_seconds", "media_cache_ttl_seconds"], HostileJSON.numeric)
    func catalogTTLsClampToSevenDaysOrAreIgnored(field: String, value: HostileJSON.Value) throws {
        let body = try #require(HostileJSON.replacing([field], in: validCatalog, with: value))
        let (ads, ttl) = try GrowthCatClient.parseCatalog(body)
        let read = field == "cache_ttl_seconds" ? ttl : ads.first?.mediaCacheTTLSeconds
        switch secondsExpectation(value) {
        case .clampedTo(let expected): #expect(read == Int(expected.rounded(.down)))
        case .absent: #expect(read == nil)
        }
    }

    @Test(
        arguments: [(["ads", "0", "ecpm"], 1_000_000.0), (["ads", "0", "placement", "reward_amount"], 1e12)],
        HostileJSON.numeric)
    func pricesAndRewardAmountsOutOfRangeAreDropped(field: ([String], Double), value: HostileJSON.Value) throws {
        let body = try #require(HostileJSON.replacing(field.0, in: validCatalog, with: value))
        let ad = try #require(try GrowthCatClient.parseCatalog(body).0.first)
        let read = field.0.last == "ecpm" ? ad.ecpm : ad.placement?.rewardAmount
        #expect(read == (value.name == "fraction" ? 0.5 : nil), "\(field.0) = \(value)")
    }

    @Test(arguments: HostileJSON.numeric)
    func bootstrapNumbersClampOrFallBackToTheirDefaults(value: HostileJSON.Value) throws {
        let valid =
            #"{"app_id": "a", "ads": {"ads_enabled": true, "ad_cache_ttl_seconds": 300, "max_offline_ad_events": 500}}"#
        let ttl = try GrowthCatClient.parseBootstrap(
            try #require(HostileJSON.replacing(["ads", "ad_cache_ttl_seconds"], in: valid, with: value)))
        let cap = try GrowthCatClient.parseBootstrap(
            try #require(HostileJSON.replacing(["ads", "max_offline_ad_events"], in: valid, with: value)))
        switch value.name {
        case "huge", "int64_max":
            #expect(ttl.adsConfig.adCacheTTLSeconds == 604_800)
            #expect(cap.adsConfig.maxOfflineAdEvents == 100_000)
        case "fraction":
            #expect(ttl.adsConfig.adCacheTTLSeconds == 0)
            #expect(cap.adsConfig.maxOfflineAdEvents == 500, "under 1 event falls back to the default")
        default:
            #expect(ttl.adsConfig.adCacheTTLSeconds == 300)
            #expect(cap.adsConfig.maxOfflineAdEvents == 500)
        }
    }

    @Test(arguments: HostileJSON.numeric)
    func aValidatedRewardWithAnUnreadableAmountIsAnErrorNeverANilReward(value: HostileJSON.Value) throws {
        let valid = #"{"reward_validated": true, "accepted": 1, "reward": {"name": "Coins", "amount": 50}}"#
        let body = try #require(HostileJSON.replacing(["reward", "amount"], in: valid, with: value))
        if value.name == "fraction" {
            #expect(try GrowthCatClient.parseRewardAnswer(body).reward?.amount == 0.5)
        } else {
            #expect(throws: AdError.self) { try GrowthCatClient.parseRewardAnswer(body) }
        }
    }

    @Test func aRewardOfTwelveAndAHalfIsGrantedAsTwelveAndAHalf() throws {
        let body = Data(#"{"reward_validated": true, "accepted": 1, "reward": {"name": "Coins", "amount": 12.5}}"#.utf8)
        let answer = try GrowthCatClient.parseRewardAnswer(body)
        #expect(answer.reward?.name == "Coins" && answer.reward?.amount == 12.5)
    }

    @Test(arguments: HostileJSON.numeric)
    func eventAndRewardCountsClampToZeroOrAMillion(value: HostileJSON.Value) throws {
        let valid = #"{"accepted": 3, "duplicates": 1}"#
        let duplicates = try GrowthCatClient.parseEventsAnswer(
            try #require(HostileJSON.replacing(["duplicates"], in: valid, with: value)))
        let accepted = try GrowthCatClient.parseEventsAnswer(
            try #require(HostileJSON.replacing(["accepted"], in: valid, with: value)))
        let reward = try GrowthCatClient.parseRewardAnswer(
            try #require(
                HostileJSON.replacing(["accepted"], in: #"{"reward_validated": false, "accepted": 1}"#, with: value)))
        let expected =
            switch value.name {
            case "huge", "int64_max": 1_000_000
            default: 0
            }
        #expect(duplicates.duplicates == expected && duplicates.accepted == 3)
        #expect(accepted.accepted == expected && accepted.duplicates == 1)
        #expect(reward.accepted == expected && !reward.rewardValidated)
    }

    @Test func aDeeplyNestedCatalogIsAnInvalidResponseNamingTheLimit() {
        let body = Data((#"{"ads": "# + String(repeating: "[", count: 100_000)).utf8)
        #expect(throws: AdError(.invalidResponse, "the catalog: nesting deeper than 32 levels")) {
            try GrowthCatClient.parseCatalog(body)
        }
    }

    @Test func aHugeRewardedMinimumViewTimeNeverTrapsThePresentation() throws {
        let body = try #require(
            HostileJSON.replacing(
                ["ads", "0", "placement", "minimum_view_seconds"], in: validCatalog, with: HostileJSON.huge))
        let ad = try #require(try GrowthCatClient.parseCatalog(body).0.first)
        let (session, _) = GrowthCatPresentation.present(ad, at: .zero)
        #expect(
            session.closeAvailableAt == .zero + .seconds(30),
            "a week-long minimum: the close appears at the video's end")
        var image = ad
        image.creativeType = "image"
        #expect(
            GrowthCatPresentation.present(image, at: .zero).0.closeAvailableAt == AdInstant.zero
                + GrowthCatPresentation.maximumCloseDelay)
    }
}

@Suite("GrowthCat never reports an event it did not save", .timeLimit(.minutes(1)))
struct GrowthCatNoSilentLossTests {
    /// An event that cannot fit the queue at all is refused with a storage error, and dropping it costs nothing
    /// already acknowledged. (A queue that is merely full drops its oldest events instead: `NothingLostTests`.)
    @Test func anEventLargerThanTheQueueIsAStorageErrorAndEveryAcknowledgedEventIsKept() async throws {
        let f = try await gcFixture { configuration in
            configuration.eventQueueMaxBytes = 64 << 10  // a full disk, in miniature
            configuration.batchSize = 10_000  // nothing is flushed (and deleted) during the test
        }
        let ad = try #require(try await f.client.loadAd(placementKey: "video_break"))
        for n in 0..<3 {
            try await f.client.trackAdEvent(
                .videoProgress, for: ad, placementKey: "video_break", metadata: ["n": "\(n)"])
        }
        let huge = String(repeating: "x", count: 40 << 10)
        var failure: AdError?
        do {
            try await f.client.trackAdEvent(
                .videoProgress, for: ad, placementKey: "video_break", metadata: ["pad": huge])
        } catch {
            failure = error
        }
        #expect(failure?.code == .storage, "the append that cannot fit was refused")
        #expect(await f.client.pendingEventCount == 3, "every acknowledged event is on disk, the refused one is not")
        await f.close()
    }
}

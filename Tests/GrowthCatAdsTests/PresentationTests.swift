import AdMediation
import Testing

@testable import GrowthCatAds

func gcAd(
    type: String = "image", duration: Double? = nil, skippableAfter: Double? = nil, isSkippable: Bool = true,
    reward: Double? = nil, presentation: String? = nil
) -> GrowthCatAd {
    GrowthCatAd(
        placement: .init(
            key: "p", format: .interstitial, rewardEnabled: reward != nil, rewardName: reward == nil ? nil : "Coins",
            rewardAmount: reward == nil ? nil : 5, minimumViewSeconds: reward, isSkippable: isSkippable,
            skippableAfterSeconds: skippableAfter),
        campaignID: "c", creativeID: "cr", creativeType: type, assetURL: "https://a/x", headline: nil, ctaText: nil,
        durationSeconds: duration, storePresentation: presentation, appStoreID: nil, assetCacheable: true,
        assetTTLSeconds: nil,
        assetStrategy: nil, allocationID: "a", token: "t", closeIsSkippable: nil, closeSkippableAfterSeconds: nil,
        rewardGrantAfterSeconds: nil, ecpm: nil)
}

let t0 = AdInstant.zero
func at(_ s: Double) -> AdInstant { t0 + .milliseconds(Int64(s * 1000)) }

@Suite("GrowthCat presentation rules", .timeLimit(.minutes(2)))
struct PresentationTests {
    @Test func presentingReportsTheImpression() {
        #expect(GrowthCatPresentation.present(gcAd(), at: t0).1.map(\.name) == [.impression])
    }

    @Test func imageClosesAfterThreeSecondsWhenSkippableAfterIsNull() {
        let (s, _) = GrowthCatPresentation.present(gcAd(), at: t0)
        #expect(!s.isCloseVisible(at: at(2.999)))
        #expect(s.isCloseVisible(at: at(3)))
    }

    @Test func imageClosesAfterSkippableAfterSeconds() {
        let (s, _) = GrowthCatPresentation.present(gcAd(skippableAfter: 7), at: t0)
        #expect(s.closeAvailableAt == at(7))
    }

    @Test func videoClosesPerPolicy() {
        #expect(
            GrowthCatPresentation.present(gcAd(type: "video", duration: 30, skippableAfter: 5), at: t0).0
                .closeAvailableAt == at(5))
    }

    @Test func videoWithoutPolicyClosesAtTheEnd() {
        #expect(GrowthCatPresentation.present(gcAd(type: "video", duration: 30), at: t0).0.closeAvailableAt == at(30))
    }

    @Test func rewardedCloseIsHiddenUntilTheMinimumViewTime() {
        var (s, _) = GrowthCatPresentation.present(
            gcAd(type: "video", duration: 30, skippableAfter: 5, reward: 15), at: t0)
        #expect(s.close(at: at(14)).0 == .notYet(availableAt: at(15)))
        let (result, events) = s.close(at: at(16))
        #expect(result == .closed(validateReward: (viewedSeconds: 16, completed: false)))
        #expect(events.last?.name == .adClosed)
    }

    @Test func videoEventsFollowTheQuartilesInOrder() {
        var (s, first) = GrowthCatPresentation.present(gcAd(type: "video", duration: 20), at: t0)
        #expect(first.map(\.name) == [.impression, .videoStart])
        #expect(s.advance(to: at(4.9)).isEmpty)
        #expect(s.advance(to: at(5)).map { $0.metadata["progress_pct"] } == ["25"])
        #expect(s.advance(to: at(15)).map { $0.metadata["progress_pct"] } == ["50", "75"])
        #expect(s.advance(to: at(20)).map(\.name) == [.videoComplete])
        #expect(s.advance(to: at(25)).isEmpty, "each event once")
    }

    @Test func nextChangeWalksTheQuartilesTheRewardAndTheEnd() {
        var (s, _) = GrowthCatPresentation.present(gcAd(type: "video", duration: 20, reward: 12), at: t0)
        #expect(s.nextChange(after: t0) == at(5))
        #expect(s.nextChange(after: at(5)) == at(10))
        #expect(s.nextChange(after: at(10)) == at(12), "the reward and the close button")
        #expect(s.nextChange(after: at(15)) == at(20))
        _ = s.advance(to: at(20))
        _ = s.rewardValidation(at: at(20))
        #expect(s.nextChange(after: at(20)) == nil)
    }

    @Test func dismissalClosesWithoutHandingOutTheReward() {
        var (s, _) = GrowthCatPresentation.present(gcAd(type: "video", duration: 30, reward: 15), at: t0)
        #expect(s.dismiss(at: at(8)).map(\.name) == [.videoProgress, .adClosed])
        #expect(s.isClosed)
        #expect(s.rewardValidation(at: at(20)) == nil)
        #expect(s.nextChange(after: at(8)) == nil)
    }

    @Test func completedRewardedVideoValidatesAsCompleted() {
        var (s, _) = GrowthCatPresentation.present(gcAd(type: "video", duration: 30, reward: 15), at: t0)
        _ = s.advance(to: at(30))
        #expect(s.close(at: at(31)).0 == .closed(validateReward: (viewedSeconds: 31, completed: true)))
    }

    @Test func appStoreCreativesCarryTheirPresentation() {
        #expect(
            GrowthCatPresentation.present(gcAd(type: "app_store", presentation: "product_view"), at: t0).0
                .storePresentation == "product_view")
        #expect(
            GrowthCatPresentation.present(gcAd(type: "app_store", presentation: "overlay"), at: t0).0.storePresentation
                == "overlay")
        #expect(GrowthCatPresentation.present(gcAd(), at: t0).0.storePresentation == nil)
    }

    @Test func clickIsAnEvent() {
        #expect(GrowthCatPresentation.present(gcAd(), at: t0).0.click().map(\.name) == [.click])
    }
}

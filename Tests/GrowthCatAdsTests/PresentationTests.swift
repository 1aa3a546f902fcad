import Testing

@testable import AdMediation
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

    /// Seed: "the close button is hidden until minimum_view_seconds elapses" — of playback for a video.
    @Test func rewardedCloseIsHiddenUntilTheMinimumViewTime() {
        var (s, _) = GrowthCatPresentation.present(
            gcAd(type: "video", duration: 30, skippableAfter: 5, reward: 15), at: t0)
        _ = s.playbackProgressed(to: 14.0 / 30, at: at(14))
        #expect(s.close(at: at(14)).0 == .notYet(availableAt: at(15)))
        _ = s.playbackProgressed(to: 16.0 / 30, at: at(16))
        let (result, events) = s.close(at: at(16))
        #expect(result == .closed(validateReward: (viewedSeconds: 16, completed: false)))
        #expect(events.last?.name == .adClosed)
    }

    /// Seed: "video_progress fires at 25%, 50%, and 75%" — of the video played, never of the time on screen.
    @Test func videoEventsFollowThePlayedQuartilesInOrder() {
        var (s, first) = GrowthCatPresentation.present(gcAd(type: "video", duration: 20), at: t0)
        #expect(first.map(\.name) == [.impression, .videoStart])
        #expect(s.advance(to: at(15)).isEmpty, "time on screen is not playback")
        #expect(s.playbackProgressed(to: 0.24, at: at(16)).isEmpty)
        #expect(s.playbackProgressed(to: 0.25, at: at(17)).map { $0.metadata["progress_pct"] } == ["25"])
        #expect(s.playbackProgressed(to: 0.8, at: at(25)).map { $0.metadata["progress_pct"] } == ["50", "75"])
        #expect(s.playbackEnded(at: at(30)).map(\.name) == [.videoComplete])
        #expect(s.playbackEnded(at: at(31)).isEmpty, "each event once")
    }

    @Test func nextChangeIsOnlyTheClocksOwnAnImagesCloseButton() {
        let (image, _) = GrowthCatPresentation.present(gcAd(skippableAfter: 7), at: t0)
        #expect(image.nextChange(after: t0) == at(7))
        #expect(image.nextChange(after: at(7)) == nil)
        let (video, _) = GrowthCatPresentation.present(gcAd(type: "video", duration: 20, reward: 12), at: t0)
        #expect(video.nextChange(after: t0) == nil, "a video's changes come from playback")
    }

    @Test func dismissalClosesWithoutHandingOutTheReward() {
        var (s, _) = GrowthCatPresentation.present(gcAd(type: "video", duration: 30, reward: 15), at: t0)
        #expect(s.dismiss(at: at(8)).map(\.name) == [.adClosed])
        #expect(s.isClosed)
        #expect(s.rewardValidation(at: at(20)) == nil)
        #expect(s.nextChange(after: at(8)) == nil)
    }

    @Test func completedRewardedVideoValidatesAsCompleted() {
        var (s, _) = GrowthCatPresentation.present(gcAd(type: "video", duration: 30, reward: 40), at: t0)
        _ = s.playbackEnded(at: at(30))
        // The 30 s video is shorter than the 40 s minimum: closed at 31 s, the claim carries the actual elapsed time.
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

    /// Issue 29 item 5. Seed: ".click — User taps the CTA (once per tap)": a second CTA tap (after dismissing StoreKit)
    /// is a second click.
    @Test func eachCTATapIsAClick() {
        let contract = GrowthCatPresentation.contract(for: gcAd(type: "app_store", presentation: "overlay"))
        #expect(contract.clicks == .eachTap)
        var ledger = FullScreenLedger(contract: contract, presentedAt: t0)
        #expect(ledger.apply(.renderBegan, at: t0) == [.event(.impression)])
        #expect(ledger.apply(.tapped, at: at(1)) == [.event(.click)])
        #expect(ledger.apply(.tapped, at: at(9)) == [.event(.click)], "the tap after StoreKit was dismissed")
    }

    /// Seed: "impression fires immediately on presentation" — of an image the renderer shows; a video's "video_start
    /// + impression fire when playback begins", not when the ad is handed to the renderer.
    @Test func aVideoCountsItsImpressionWhenPlaybackBeginsNotWhenPresented() {
        var s = GrowthCatPresentation.presented(gcAd(type: "video", duration: 30), at: t0)
        #expect(s.apply(.renderBegan, at: at(1)).isEmpty)
        #expect(s.advance(to: at(10)).isEmpty, "buffering: nothing is earned")
        #expect(s.apply(.playbackStarted, at: at(11)).map(\.name) == [.impression, .videoStart])
    }
}

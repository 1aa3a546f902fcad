import AdMediation
import Testing

@testable import GrowthCatAds

/// A rewarded ad with no minimum view time and no grant time (both null on the wire).
func rewardedWithoutMinimum(type: String, duration: Double? = nil) -> GrowthCatAd {
    var ad = gcAd(type: type, duration: duration, reward: 1)
    ad.placement?.minimumViewSeconds = nil
    return ad
}

@Suite("GrowthCat rewarded ads never trap the user", .timeLimit(.minutes(2)))
struct RewardedRulesTests {
    /// Seed: "For rewarded placements the close button is hidden until minimum_view_seconds elapses (or the video
    /// finishes). The user cannot skip early" — and with no minimum at all, the documented default applies.
    @Test func aRewardedImageWithNoMinimumClosesAfterTheDocumentedDefault() {
        let (s, _) = GrowthCatPresentation.present(rewardedWithoutMinimum(type: "image"), at: t0)
        #expect(s.closeAvailableAt == t0 + GrowthCatPresentation.rewardedImageDefaultMinimum)
        #expect(GrowthCatPresentation.rewardedImageDefaultMinimum == .seconds(15))
    }

    @Test func aRewardedVideoWithoutDurationClosesWhenTheRendererReportsTheEnd() {
        var (s, _) = GrowthCatPresentation.present(rewardedWithoutMinimum(type: "video"), at: t0)
        #expect(!s.isCloseVisible(at: at(20)))
        let events = s.playbackEnded(at: at(22))
        #expect(events.map(\.name) == [.videoProgress, .videoProgress, .videoProgress, .videoComplete])
        #expect(s.isCloseVisible(at: at(22)))
        if case (.closed(let validate?), _) = s.close(at: at(22)) {
            #expect(validate.completed && validate.viewedSeconds == 22)
        } else {
            Issue.record("the close was refused after the video ended")
        }
    }

    /// Seed: "video_complete fires when video reaches the end" — progress from the renderer drives the quartiles
    /// when the server sent no duration.
    @Test func rendererProgressEmitsQuartilesWithoutADuration() {
        var (s, _) = GrowthCatPresentation.present(gcAd(type: "video"), at: t0)
        #expect(s.playbackProgressed(to: 0.3, at: at(3)).map { $0.metadata["progress_pct"] } == ["25"])
        #expect(s.playbackProgressed(to: 0.8, at: at(8)).map { $0.metadata["progress_pct"] } == ["50", "75"])
        #expect(s.playbackProgressed(to: 1, at: at(10)).map(\.name) == [.videoComplete])
    }

    @Test func theCloseAppearsAtTheVideosEndWhenTheMinimumViewTimeIsLonger() {
        let (s, _) = GrowthCatPresentation.present(gcAd(type: "video", duration: 10, reward: 30), at: t0)
        #expect(s.closeAvailableAt == at(10))
    }

    /// Seed: "Once the user has watched for minimum_view_seconds … the SDK calls POST /v1/ads/reward/validate with the
    /// actual elapsed seconds."
    @Test func theRewardIsDueForValidationWhenTheMinimumViewTimeIsReachedNotOnlyAtClose() {
        var (s, _) = GrowthCatPresentation.present(gcAd(type: "video", duration: 30, reward: 15), at: t0)
        #expect(s.rewardValidation(at: at(14)) == nil, "not before the minimum")
        let due = s.rewardValidation(at: at(15))
        #expect(due?.viewedSeconds == 15 && due?.completed == false)
        #expect(s.rewardValidation(at: at(16)) == nil, "handed out once")
        if case (.closed(let validate), _) = s.close(at: at(20)) {
            #expect(validate == nil, "already validated at the minimum")
        } else {
            Issue.record("the close was refused after the minimum")
        }
    }

    @Test func askingForTheRewardDoesNotSwallowTheVideoEventsDueByThen() {
        var (s, _) = GrowthCatPresentation.present(gcAd(type: "video", duration: 30, reward: 15), at: t0)
        #expect(s.rewardValidation(at: at(15)) != nil)
        #expect(s.advance(to: at(15)).map { $0.metadata["progress_pct"] } == ["25", "50"])
    }

    @Test func aVideoThatNeverReportsItsEndStillClosesAfterTheMaximumDelay() {
        let (s, _) = GrowthCatPresentation.present(gcAd(type: "video", isSkippable: false), at: t0)
        #expect(!s.isCloseVisible(at: at(299)))
        #expect(s.isCloseVisible(at: t0 + GrowthCatPresentation.maximumCloseDelay))
    }
}

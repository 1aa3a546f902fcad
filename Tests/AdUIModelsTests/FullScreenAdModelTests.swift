import AdMediation
import AdMediationTesting
import AdUIModels
import Observation
import Testing

/// Starts `model`'s presentation in a task of its own and returns it once the model shows the ad.
@MainActor
private func presenting(_ model: FullScreenAdModel) async -> Task<FullScreenResult?, Never> {
    let task = Task { try? await model.present() }
    await waitUntil("the model shows the ad") { model.phase == .showing }
    return task
}

/// Advances `clock` by one second and waits until the countdown shows `expected`.
@MainActor
private func tick(_ clock: ManualAdClock, _ model: FullScreenAdModel, expecting expected: String?) async {
    await clock.advance(by: .seconds(1))
    await waitUntil("the countdown shows \(expected ?? "nothing")") { model.countdownText == expected }
}

@MainActor
@Suite("Full-screen model", .timeLimit(.minutes(2)))
struct FullScreenAdModelTests {
    @Test func theCountdownTicksEachSecondAndNotifiesItsObservers() async {
        let clock = ManualAdClock()
        let (ad, _) = fullScreenAd(
            TestRules(contract: FullScreenContract(creative: .image, close: .afterShown(.seconds(5)))))
        let model = FullScreenAdModel(ad: ad, clock: clock)
        let presentation = await presenting(model)
        #expect(model.countdownText == nil, "no countdown before the ad rendered")
        await model.renderBegan()
        #expect(model.countdownText == "5")
        let fired = Fired()
        withObservationTracking {
            _ = model.countdownText
        } onChange: {
            fired.set()
        }
        await tick(clock, model, expecting: "4")
        #expect(fired.value, "the countdown's change reached its observer")
        model.dismissed()
        _ = await presentation.value
    }

    @Test func theCloseButtonShowsOnlyWhenTheCountdownEnds() async {
        let clock = ManualAdClock()
        let (ad, _) = fullScreenAd(
            TestRules(contract: FullScreenContract(creative: .image, close: .afterShown(.seconds(3)))))
        let model = FullScreenAdModel(ad: ad, clock: clock)
        let presentation = await presenting(model)
        await model.renderBegan()
        for left in ["2", "1"] {
            await tick(clock, model, expecting: left)
            #expect(!model.closeVisible, "the close button showed with \(left) s left")
        }
        await clock.advance(by: .seconds(1))
        await waitUntil("the close button shows at 3 s") { model.closeVisible }
        #expect(model.countdownText == nil)
        await model.closeTapped()
        _ = await presentation.value
    }

    @Test func aClockTickThatChangesNothingNotifiesNoObserver() async {
        let clock = ManualAdClock()
        let (ad, _) = fullScreenAd(TestRules(contract: .standard))
        let model = FullScreenAdModel(ad: ad, clock: clock)
        let presentation = await presenting(model)
        await model.renderBegan()
        #expect(model.closeVisible)
        // The presentation's timer and the model's clock task sleep; after the tick both have run and slept again.
        await clock.waitForSleepers(2)
        let fired = Fired()
        withObservationTracking {
            _ = (model.media, model.sponsoredLabel, model.closeVisible, model.secondsUntilClose)
            _ = (model.progress, model.reward, model.hasFailed, model.phase)
        } onChange: {
            fired.set()
        }
        await clock.advance(by: .seconds(1))
        await clock.waitForSleepers(2)
        #expect(!fired.value, "an unchanged state was published again (a view would redraw every second)")
        await model.closeTapped()
        _ = await presentation.value
    }

    @Test func aCloseTapBeforeTheButtonShowsIsRefused() async {
        let clock = ManualAdClock()
        let (ad, reporter) = fullScreenAd(
            TestRules(contract: FullScreenContract(creative: .image, close: .afterShown(.seconds(5)))))
        let model = FullScreenAdModel(ad: ad, clock: clock)
        let presentation = await presenting(model)
        await model.renderBegan()
        let closed = await model.closeTapped()
        #expect(!closed)
        #expect(model.phase == .showing)
        #expect(model.countdownText == "5")
        model.dismissed()
        _ = await presentation.value
        #expect(reporter.received == [.impression, .closed])
    }

    @Test func closingAMediatedAdEndsThePresentationWithTheLedgersEvents() async throws {
        let clock = ManualAdClock()
        let network = ScriptedAdNetwork(id: "scripted", clock: clock, script: ["level": [.fill(ecpm: 5, ttl: nil)]])
        let mediator = try Mediator(
            networks: [network],
            configuration: MediationConfiguration(placements: [
                "level_end": PlacementConfiguration(
                    format: .interstitial,
                    lines: [WaterfallLine(network: "scripted", placement: "level", timeout: .seconds(1))])
            ]), clock: clock)
        guard case .filled(let ad) = try await mediator.load("level_end") else {
            Issue.record("no fill")
            return
        }
        let model = FullScreenAdModel(ad: ad, clock: clock)
        let presentation = await presenting(model)
        #expect(model.creative.id == ad.creative.id)
        await model.renderBegan()
        await model.tapped()
        #expect(model.closeVisible, "the standard rules show the close button at once")
        #expect(await model.closeTapped())
        let result = await presentation.value
        #expect(model.phase == .finished)
        #expect(result != nil && model.result != nil)
        #expect(network.reportedEvents.map(\.event) == [.impression, .click, .closed])
    }

    @Test func theRewardIsPendingUntilItsConditionAndGrantedOnceConfirmed() async {
        let clock = ManualAdClock()
        let coins = AdReward(name: "coins", amount: 10)
        let rules = TestRules(
            contract: FullScreenContract(creative: .image, reward: .init(minimumView: .seconds(2))), grants: coins)
        let (ad, _) = fullScreenAd(rules)
        let model = FullScreenAdModel(ad: ad, clock: clock)
        let presentation = await presenting(model)
        await model.renderBegan()
        #expect(model.reward == .pending)
        await tick(clock, model, expecting: "1")
        #expect(model.reward == .pending, "the reward's condition is not met at 1 s")
        await clock.advance(by: .seconds(1))
        await waitUntil("the claim goes to the network at 2 s") { model.reward != .pending }
        #expect(model.closeVisible)
        #expect(await model.closeTapped())
        _ = await presentation.value
        #expect(model.reward == .granted(coins))
        #expect(model.result?.reward == coins)
    }

    @Test func aRewardTheNetworkRefusesEndsNotGranted() async {
        let clock = ManualAdClock()
        let rules = TestRules(
            contract: FullScreenContract(creative: .image, reward: .init(minimumView: .seconds(1))), grants: nil)
        let (ad, _) = fullScreenAd(rules)
        let model = FullScreenAdModel(ad: ad, clock: clock)
        let presentation = await presenting(model)
        await model.renderBegan()
        await clock.advance(by: .seconds(1))
        await waitUntil("the close button shows at 1 s") { model.closeVisible }
        await model.closeTapped()
        _ = await presentation.value
        #expect(model.reward == .notGranted)
    }

    @Test func anAdWithoutARewardSaysSo() async {
        let (ad, _) = fullScreenAd(TestRules(contract: .standard))
        let model = FullScreenAdModel(ad: ad, clock: ManualAdClock())
        let presentation = await presenting(model)
        await model.renderBegan()
        #expect(model.reward == .notOffered)
        await model.closeTapped()
        _ = await presentation.value
        #expect(model.reward == .notOffered)
    }

    @Test func videoProgressFollowsTheFurthestPositionPlayed() async {
        let clock = ManualAdClock()
        let (ad, _) = fullScreenAd(
            TestRules(contract: FullScreenContract(creative: .video(duration: .seconds(20)), close: .atEnd)),
            kind: "video")
        let model = FullScreenAdModel(ad: ad, clock: clock)
        let presentation = await presenting(model)
        await model.playbackStarted()
        #expect(model.media == .video(duration: .seconds(20)))
        #expect(model.progress == 0)
        await model.playbackProgressed(to: .seconds(5))
        #expect(model.progress == 0.25)
        await model.playbackProgressed(to: .seconds(2))
        #expect(model.progress == 0.25, "seeking back un-plays nothing")
        #expect(!model.closeVisible)
        await model.playbackEnded()
        #expect(model.progress == 1)
        #expect(model.closeVisible, "the close button shows at the video's real end")
        await model.closeTapped()
        _ = await presentation.value
    }

    /// One case of the label rule: whether the network asks for it, the creative's own wording, what shows.
    struct LabelCase: Sendable, CustomTestStringConvertible {
        var shown: Bool
        var disclosure: String?
        var expected: String?
        var testDescription: String { "shown \(shown), disclosure \(disclosure ?? "none")" }
    }

    @Test(arguments: [
        LabelCase(shown: true, disclosure: nil, expected: "Sponsored"),
        LabelCase(shown: true, disclosure: "Anzeige", expected: "Anzeige"),
        LabelCase(shown: false, disclosure: nil, expected: nil),
    ])
    func theSponsoredLabelFollowsTheNetworksRules(_ label: LabelCase) async {
        let (ad, _) = fullScreenAd(
            TestRules(contract: .standard, showsSponsoredLabel: label.shown), disclosure: label.disclosure)
        let model = FullScreenAdModel(ad: ad, clock: ManualAdClock())
        let presentation = await presenting(model)
        await model.renderBegan()
        #expect(model.sponsoredLabel == label.expected)
        await model.closeTapped()
        _ = await presentation.value
    }

    @Test func dismissingEndsThePresentationAsADismissal() async {
        let (ad, reporter) = fullScreenAd(
            TestRules(contract: FullScreenContract(creative: .image, close: .afterShown(.seconds(30)))))
        let model = FullScreenAdModel(ad: ad, clock: ManualAdClock())
        let presentation = await presenting(model)
        await model.renderBegan()
        model.dismissed()
        let result = await presentation.value
        #expect(model.phase == .finished)
        #expect(result?.log.contains { $0.kind == .dismissed } == true)
        #expect(reporter.received == [.impression, .closed])
    }

    @Test func theModelsClockTaskEndsWithThePresentation() async {
        let clock = ManualAdClock()
        let (ad, _) = fullScreenAd(
            TestRules(contract: FullScreenContract(creative: .image, close: .afterShown(.seconds(9)))))
        let model = FullScreenAdModel(ad: ad, clock: clock)
        let presentation = await presenting(model)
        await model.renderBegan()
        // The presentation's timer and the model's countdown both sleep on the clock while the ad is up.
        await clock.waitForSleepers(2)
        model.dismissed()
        _ = await presentation.value
        #expect(clock.sleeperCount == 0, "a task still sleeps on the clock after the presentation ended")
    }

    @Test func anAdIsPresentedOnce() async {
        let (ad, _) = fullScreenAd(TestRules(contract: .standard))
        let model = FullScreenAdModel(ad: ad, clock: ManualAdClock())
        let presentation = await presenting(model)
        await model.renderBegan()
        await model.closeTapped()
        _ = await presentation.value
        await #expect(throws: AdError.self) { try await model.present() }
        #expect(model.phase == .finished)
    }
}

import AdMediation
import AdMediationTesting
import AdPresentation
import ChartboostBanners
import Testing

/// How a banner reaches the slot: the network's own ad, through a `Mediator`, or through a `Mediator` that is a line
/// of another.
enum BannerPath: String, Sendable, CaseIterable, CustomTestStringConvertible {
    case bare, mediated, nested
    var testDescription: String { rawValue }

    /// The network the slot loads from and the request it sends, over `network` (placement "slot").
    func source(over network: ScriptedAdNetwork, clock: ManualAdClock) throws -> (any AdNetwork, AdRequest) {
        let format = AdFormat.banner(.standard)
        guard self != .bare else { return (network, AdRequest(placement: "slot", format: format)) }
        var mediator = try Mediator(
            id: "inner", networks: [network],
            configuration: .init(placements: [
                "slot": PlacementConfiguration(
                    format: format, lines: [WaterfallLine(network: network.id, placement: "slot")])
            ]), clock: clock)
        if self == .nested {
            mediator = try Mediator(
                id: "outer", networks: [mediator],
                configuration: .init(placements: [
                    "slot": PlacementConfiguration(
                        format: format, lines: [WaterfallLine(network: "inner", placement: "slot")])
                ]), clock: clock)
        }
        return (mediator, AdRequest(placement: "slot", format: format))
    }
}

/// Inline ads count their impression when the app says the ad was drawn, never when the slot picks it (issue 42:
/// "Inline ads get a `drawn()` signal and their impression comes only from it"), on every path an ad can take.
@Suite("Inline impressions come from the drawn signal", .timeLimit(.minutes(1)))
struct DrawnImpressionTests {
    private func impressions(_ network: ScriptedAdNetwork) -> [AdEventRecord] {
        network.reportedRecords.filter { $0.event == .impression }
    }

    @Test(arguments: BannerPath.allCases)
    func theImpressionIsStampedWhenTheAppDrawsTheAdNotWhenTheSlotShowsIt(_ path: BannerPath) async throws {
        let clock = ManualAdClock()
        let network = ScriptedAdNetwork(id: "n", clock: clock, script: [:], fallback: .fill())
        let (source, request) = try path.source(over: network, clock: clock)
        let slot = BannerRefreshController(
            network: source, request: request, policy: .init(preloadAfterImpression: false), clock: clock)
        await slot.start()
        try await eventually("the first ad on screen") { await slot.currentAd != nil }
        let shownAt = clock.now
        await clock.advance(by: .seconds(5))  // the app draws it five seconds later (a slow first frame)
        #expect(impressions(network).isEmpty, "no impression before the app said the ad was drawn")

        await slot.drawn()

        try await eventually("the impression") { !impressions(network).isEmpty }
        let record = try #require(impressions(network).first)
        #expect(record.occurredAt == shownAt + .seconds(5))
        #expect(record.ad.creative.id == (await slot.currentAd)?.creative.id)
    }

    @Test(arguments: BannerPath.allCases)
    func drawingTheSameAdAgainCountsNoSecondImpression(_ path: BannerPath) async throws {
        let clock = ManualAdClock()
        let network = ScriptedAdNetwork(id: "n", clock: clock, script: [:], fallback: .fill())
        let (source, request) = try path.source(over: network, clock: clock)
        let slot = BannerRefreshController(
            network: source, request: request, policy: .init(preloadAfterImpression: false), clock: clock)
        await slot.start()
        try await eventually("the first ad on screen") { await slot.currentAd != nil }

        await slot.drawn()
        try await eventually("the impression logged") {
            await slot.history.contains { if case .impression = $0 { true } else { false } }
        }
        await slot.drawn()  // redrawn (scrolled back into view): the same ad, the same impression
        await slot.drawn(adID: (await slot.currentAd)?.creative.id)

        #expect(impressions(network).count == 1)
        #expect(await slot.history.filter { if case .impressionFailed = $0 { true } else { false } }.isEmpty)
    }

    @Test(arguments: BannerPath.allCases)
    func aDrawnSignalForAnAdARefreshReplacedCountsNothingForTheNewAd(_ path: BannerPath) async throws {
        let clock = ManualAdClock()
        let network = ScriptedAdNetwork(id: "n", clock: clock, script: [:], fallback: .fill())
        let (source, request) = try path.source(over: network, clock: clock)
        let slot = BannerRefreshController(
            network: source, request: request, policy: .init(preloadAfterImpression: false), clock: clock)
        await slot.start()
        try await eventually("the first ad on screen") { await slot.currentAd != nil }
        let first = try #require(await slot.currentAd).creative.id
        await slot.drawn(adID: first)
        try await eventually("the first impression") { impressions(network).count == 1 }

        await clock.advance(by: .seconds(30))  // the refresh shows the next ad
        try await eventually("the refreshed ad on screen") { await slot.currentAd?.creative.id != first }
        await slot.drawn(adID: first)  // a late frame of the old creative

        await slot.waitForLoad()
        #expect(impressions(network).map(\.ad.creative.id) == [first], "the new ad was never drawn")
        let second = try #require(await slot.currentAd).creative.id
        await slot.drawn(adID: second)
        try await eventually("the second impression") { impressions(network).count == 2 }
        #expect(impressions(network).map(\.ad.creative.id) == [first, second])
    }

    @Test(arguments: BannerPath.allCases)
    func aManualBannersDidShowAdWaitsForTheDrawnSignal(_ path: BannerPath) async throws {
        let clock = ManualAdClock()
        let network = ScriptedAdNetwork(id: "n", clock: clock, script: [:], fallback: .fill())
        let (source, _) = try path.source(over: network, clock: clock)
        let delegate = RecordingDelegate()
        let banner = ChartboostBanner(
            size: .standard, location: "slot", network: source, delegate: delegate, clock: clock)
        await banner.setAutomaticallyRefreshesContent(false)
        await banner.cache()
        await banner.show()
        #expect(delegate.log == ["didCacheAd", "willShowAd"], "shown, not yet presented with an impression")
        #expect(impressions(network).isEmpty)

        await clock.advance(by: .seconds(2))
        await banner.drawn()

        // Seed: didShowAd "if the ad has been presented and an ad impression logged".
        #expect(delegate.log == ["didCacheAd", "willShowAd", "didShowAd"])
        let record = try #require(impressions(network).first)
        #expect(record.occurredAt == AdInstant.zero + .seconds(2))
    }
}

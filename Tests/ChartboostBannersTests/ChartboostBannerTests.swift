import AdMediation
import AdMediationTesting
import AdNetworkConformance
import Foundation
import Testing

@testable import ChartboostBanners

/// Records delegate calls; optionally pauses clicks for confirmation.
final class RecordingDelegate: ChartboostBannerDelegate {
    let calls = LockedValue<[String]>([])
    let confirm: Bool
    let handler = LockedValue<ClickConfirmationHandler?>(nil)

    init(confirmClicks: Bool = false) { confirm = confirmClicks }

    var log: [String] { calls.withLock { $0 } }
    private func add(_ name: String, _ error: AdError?) {
        calls.withLock { $0.append(error.map { "\(name)(\($0.reason?.name ?? $0.code.name))" } ?? name) }
    }

    func didCacheAd(_ event: BannerAdEvent, error: AdError?) { add("didCacheAd", error) }
    func willShowAd(_ event: BannerAdEvent, error: AdError?) { add("willShowAd", error) }
    func didShowAd(_ event: BannerAdEvent, error: AdError?) { add("didShowAd", error) }
    func didClickAd(_ event: BannerAdEvent, error: AdError?) { add("didClickAd", error) }
    func didFinishHandlingClick(_ event: BannerAdEvent, error: AdError?) { add("didFinishHandlingClick", error) }
    func shouldConfirmClick(_ event: BannerAdEvent, confirmationHandler: ClickConfirmationHandler) -> Bool {
        add("shouldConfirmClick", nil)
        if confirm { handler.withLock { $0 = confirmationHandler } }
        return confirm
    }
}

/// A delegate that implements nothing but the required conformance.
final class SilentDelegate: ChartboostBannerDelegate {}

@Suite("Chartboost banner object", .timeLimit(.minutes(2)))
struct ChartboostBannerTests {
    func make(_ delegate: any ChartboostBannerDelegate, steps: [ScriptedAdNetwork.Step] = [.fill(ecpm: 1)]) async -> (
        ChartboostBanner, ScriptedAdNetwork
    ) {
        let network = ScriptedAdNetwork(id: "cb", script: ["Main Menu": steps])
        let banner = ChartboostBanner(
            size: .standard, location: "Main Menu", network: network, delegate: delegate, drawsEveryShownAd: true)
        return (banner, network)
    }

    func manual(_ delegate: any ChartboostBannerDelegate) async -> (ChartboostBanner, ScriptedAdNetwork) {
        let (banner, network) = await make(delegate)
        await banner.setAutomaticallyRefreshesContent(false)
        return (banner, network)
    }

    @Test func autoRefreshIsOnByDefault() async {
        let (banner, _) = await make(SilentDelegate())
        #expect(await banner.automaticallyRefreshesContent)
    }

    @Test func manualModeCachesThenShows() async {
        let delegate = RecordingDelegate()
        let (banner, network) = await manual(delegate)
        await banner.cache()
        #expect(await banner.isCached)
        await banner.show()
        #expect(delegate.log == ["didCacheAd", "willShowAd", "didShowAd"])
        #expect(await banner.isCached == false)
        #expect(network.reportedEvents.map(\.event) == [.impression])
        #expect(await banner.refreshController == nil, "no refresh in manual mode")
    }

    @Test func cacheFailureIsReportedToTheDelegate() async {
        let delegate = RecordingDelegate()
        let (banner, _) = await make(delegate, steps: [.noFill()])
        await banner.cache()
        #expect(delegate.log == ["didCacheAd(no_fill)"])
        #expect(await banner.isCached == false)
    }

    @Test func showWithoutCacheReportsTheError() async {
        let delegate = RecordingDelegate()
        let (banner, _) = await manual(delegate)
        await banner.show()
        #expect(delegate.log == ["willShowAd(no_cached_ad)", "didShowAd(no_cached_ad)"])
    }

    @Test func autoModeShowStartsTheRefreshController() async {
        let delegate = RecordingDelegate()
        let (banner, _) = await make(delegate)
        await banner.show()
        let controller = await banner.refreshController
        #expect(controller != nil)
        if let controller { await waitForShown(controller, 1) }
        while delegate.log.count < 2 { await Task.pollPause() }
        #expect(delegate.log.prefix(2) == ["willShowAd", "didShowAd"])
    }

    @Test func clickWithoutConfirmationIsHandledAtOnce() async {
        let (banner, network) = await manual(SilentDelegate())
        await banner.cache()
        await banner.show()
        await banner.click()
        #expect(network.reportedEvents.map(\.event) == [.impression, .click])
    }

    @Test func delegateReturningFalseHandlesTheClickAtOnce() async {
        let delegate = RecordingDelegate(confirmClicks: false)
        let (banner, _) = await manual(delegate)
        await banner.cache()
        await banner.show()
        await banner.click()
        #expect(delegate.log.suffix(2) == ["shouldConfirmClick", "didClickAd"])
    }

    @Test func confirmedClickGoesAheadAfterTheGate() async {
        let delegate = RecordingDelegate(confirmClicks: true)
        let (banner, network) = await manual(delegate)
        await banner.cache()
        await banner.show()
        await banner.click()
        #expect(await banner.isClickPending)
        #expect(!delegate.log.contains("didClickAd"), "paused until confirmed")
        delegate.handler.withLock { $0 }?(true)
        while await banner.isClickPending { await Task.pollPause() }
        while !delegate.log.contains("didClickAd") && !Task.isCancelled { await Task.pollPause() }
        #expect(network.reportedEvents.map(\.event) == [.impression, .click])
    }

    /// Seed (didClickAd): "If the click does not result into the opening of a link an error will be provided
    /// explaining why." — a declined click is reported nowhere, and didClickAd says it was declined.
    @Test func declinedClickIsNotReportedAndDidClickAdSaysItWasDeclined() async throws {
        let delegate = RecordingDelegate(confirmClicks: true)
        let (banner, network) = await manual(delegate)
        await banner.cache()
        await banner.show()
        await banner.click()
        delegate.handler.withLock { $0 }?(false)
        try await eventually("didClickAd") { delegate.log.contains { $0.hasPrefix("didClickAd") } }
        #expect(delegate.log.last == "didClickAd(click_declined)")
        #expect(network.reportedEvents.map(\.event) == [.impression])
    }

    @Test func unansweredGateHasNoClickEvent() async {
        let delegate = RecordingDelegate(confirmClicks: true)
        let (banner, network) = await manual(delegate)
        await banner.cache()
        await banner.show()
        await banner.click()
        #expect(await banner.isClickPending)
        #expect(!delegate.log.contains("didClickAd"))
        #expect(network.reportedEvents.map(\.event) == [.impression])
    }

    @Test func closingTheDestinationFinishesClickHandling() async {
        let delegate = RecordingDelegate()
        let (banner, _) = await manual(delegate)
        await banner.cache()
        await banner.show()
        await banner.click()
        await banner.clickDestinationClosed()
        #expect(delegate.log.last == "didFinishHandlingClick")
    }
}

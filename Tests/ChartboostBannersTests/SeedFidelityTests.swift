import AdMediation
import AdMediationTesting
import AdNetworkConformance
import Foundation
import Testing

@testable import AdPresentation
@testable import ChartboostBanners

/// A network whose impressions are held until released, or fail.
final class GatedImpressionNetwork: AdNetwork {
    let id = "gated"
    let capabilities = AdNetworkCapabilities(formats: [.banner], reportsPrice: false)
    let failImpressions: Bool
    private let state = LockedValue<(serial: Int, released: Bool, pending: Int, impressions: [String])>(
        (0, false, 0, []))

    init(failImpressions: Bool = false) { self.failImpressions = failImpressions }

    func release() { state.withLock { $0.released = true } }
    var impressions: [String] { state.withLock { $0.impressions } }
    /// Impression reports waiting for `release()`.
    var pendingImpressions: Int { state.withLock { $0.pending } }

    func load(_ request: AdRequest) async throws -> AdLoadResult {
        let serial = state.withLock {
            $0.serial += 1
            return $0.serial
        }
        return .filled(
            LoadedAd(
                networkID: id, placement: request.placement, format: request.format,
                creative: AdCreative(id: "ad\(serial)", kind: "image"), ecpm: nil, loadedAt: .zero, expiresAt: nil,
                reporter: Reporter(network: self)))
    }

    struct Reporter: AdEventReporter {
        let network: GatedImpressionNetwork
        func deliver(_ record: AdEventRecord) async throws -> AdEventDelivery {
            let ad = record.ad
            guard case .impression = record.event else { return .notSent }
            if network.failImpressions { throw AdError(.server(status: 503), "impression endpoint down") }
            network.state.withLock { $0.pending += 1 }
            let deadline = ContinuousClock.now + .seconds(30)  // a hang guard: the test releases it
            while !network.state.withLock({ $0.released }) && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(1))
            }
            network.state.withLock { $0.impressions.append(ad.creative.id) }
            return .delivered
        }
    }
}

@Suite("Chartboost-style banners as the seed states them", .timeLimit(.minutes(1)))
struct BannerSeedFidelityTests {
    /// Seed: didShowAd is "Called after a showFromViewController: call, either if the ad has been presented and an ad
    /// impression logged, or if the operation failed."
    @Test func inAutoRefreshModeDidShowAdWaitsForTheImpressionToBeLogged() async throws {
        let network = GatedImpressionNetwork()
        let delegate = RecordingDelegate()
        let banner = ChartboostBanner(
            size: .standard, location: "Main Menu", network: network, delegate: delegate, clock: ManualAdClock(),
            drawsEveryShownAd: true)
        await banner.show()
        try await eventually("willShowAd") { delegate.log.contains("willShowAd") }
        try await eventually("the impression report in progress") { network.pendingImpressions == 1 }
        #expect(!delegate.log.contains("didShowAd"), "no didShowAd while the impression is not logged")
        network.release()
        try await eventually("didShowAd after the impression") { delegate.log.contains("didShowAd") }
        #expect(network.impressions == ["ad1"])
        await banner.stop()
    }

    @Test func anImpressionFailureReachesTheDelegateAsTheShowError() async throws {
        let network = GatedImpressionNetwork(failImpressions: true)
        let delegate = RecordingDelegate()
        let banner = ChartboostBanner(
            size: .standard, location: "Main Menu", network: network, delegate: delegate, clock: ManualAdClock(),
            drawsEveryShownAd: true)
        await banner.show()
        try await eventually("didShowAd") { delegate.log.contains { $0.hasPrefix("didShowAd") } }
        #expect(
            delegate.log.filter { $0.hasPrefix("willShowAd") || $0.hasPrefix("didShowAd") } == [
                "willShowAd", "didShowAd(impression_failed)",
            ])
        await banner.stop()
    }

    @Test func inManualModeAnImpressionFailureIsAnImpressionErrorNotALoadError() async throws {
        let network = GatedImpressionNetwork(failImpressions: true)
        let delegate = RecordingDelegate()
        let banner = ChartboostBanner(
            size: .standard, location: "Main Menu", network: network, delegate: delegate, clock: ManualAdClock(),
            drawsEveryShownAd: true)
        await banner.setAutomaticallyRefreshesContent(false)
        await banner.cache()
        await banner.show()
        #expect(delegate.log.last == "didShowAd(impression_failed)")
    }

    /// Seed: didFinishHandlingClick is "Called when the link viewer presented as result of an ad click has been
    /// dismissed."
    @Test func inAutoRefreshModeDidFinishHandlingClickCarriesTheClickedAdsID() async throws {
        final class IDs: ChartboostBannerDelegate {
            let finished = LockedValue<[String?]>([])
            func didFinishHandlingClick(_ event: BannerAdEvent, error: AdError?) {
                finished.withLock { $0.append(event.adID) }
            }
        }
        let clock = ManualAdClock()
        let network = ScriptedAdNetwork(id: "n", clock: clock, fallback: .fill())
        let delegate = IDs()
        let banner = ChartboostBanner(
            size: .standard, location: "slot", network: network, delegate: delegate, clock: clock,
            drawsEveryShownAd: true)
        await banner.show()
        try await eventually("the first impression") { network.reportedEvents.count == 1 }
        let clicked = network.reportedEvents[0].creative
        await banner.click()
        await banner.clickDestinationClosed()
        #expect(delegate.finished.withLock { $0 } == [clicked])
        await banner.stop()
    }

    @Test func aPreloadedAdPastItsExpiryIsNeverShown() async throws {
        let clock = ManualAdClock()
        // Every ad expires 10 s after it loads; the refresh comes 30 s after the impression.
        let network = ScriptedAdNetwork(id: "n", clock: clock, fallback: .fill(ttl: .seconds(10)))
        let controller = BannerRefreshController(
            network: network, request: AdRequest(placement: "slot", format: .banner(.standard)), clock: clock,
            drawsEveryShownAd: true)
        await controller.start()
        try await eventually("the preload after the first impression") { await controller.hasPreloadedAd }
        await clock.advance(by: .seconds(30))
        try await eventually("a fresh ad on screen") { shownIDs(await controller.history).count == 2 }
        let shown = shownIDs(await controller.history)
        #expect(
            shown == ["n-slot-1", "n-slot-3"], "the expired preload (n-slot-2) was discarded, a new ad loaded and shown"
        )
        await controller.stop()
    }
}

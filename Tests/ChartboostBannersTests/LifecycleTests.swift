import AdMediation
import AdMediationTesting
import AdNetworkConformance
import Foundation
import Testing

@testable import AdPresentation
@testable import ChartboostBanners

/// Waits until `condition` holds, failing the test after `seconds` (never loops forever).
func eventually(_ what: String, within seconds: Int = 10, _ condition: () async -> Bool) async throws {
    let deadline = ContinuousClock.now + .seconds(seconds)
    while await !condition() {
        guard ContinuousClock.now < deadline else {
            Issue.record("timed out after \(seconds) s waiting for \(what)")
            throw CancellationError()
        }
        try await Task.sleep(for: .milliseconds(1))
    }
}

/// Advances `clock` through `minutes` simulated minutes, a second at a time, letting woken tasks run.
func simulate(_ clock: ManualAdClock, minutes: Int) async {
    for _ in 0..<(minutes * 60) {
        await clock.advance(by: .seconds(1))
        await Task.yield()
    }
}

@Suite("Banner lifecycles: nothing is loaded or reported after the owner ends", .timeLimit(.minutes(1)))
struct BannerLifecycleTests {
    let request = AdRequest(placement: "slot", format: .banner(.standard))

    @Test func aControllerReleasedMidRefreshLoadsAndReportsNothingMore() async throws {
        let clock = ManualAdClock()
        // The second load takes 2 simulated seconds: the controller is released while it is in flight.
        let network = ScriptedAdNetwork(
            id: "n", clock: clock, script: ["slot": [.fill(), .fill(latency: .seconds(2))]], fallback: .fill())
        var controller: BannerRefreshController? = BannerRefreshController(
            network: network, request: request, policy: .init(preloadAfterImpression: false), clock: clock,
            drawsEveryShownAd: true)
        weak let released = controller
        let events = try #require(controller).events
        await controller?.start()
        try await eventually("the first impression") { network.reportedEvents.count == 1 }
        await clock.advance(by: .seconds(30))
        try await eventually("the refresh load in flight") { network.loadCount == 2 }

        controller = nil
        try await eventually("the controller to be released") { released == nil }
        let loads = network.loadCount, reported = network.reportedEvents.count
        await simulate(clock, minutes: 5)

        #expect(network.loadCount == loads, "zero requests after the release")
        #expect(network.reportedEvents.count == reported, "zero events after the release")
        var received = 0
        for await _ in events { received += 1 }  // ends: the stream was finished with its owner
        #expect(received > 0)
    }

    @Test func aStoppedControllerLoadsAndReportsNothingMoreAndIgnoresItsInFlightLoad() async throws {
        let clock = ManualAdClock()
        let network = ScriptedAdNetwork(
            id: "n", clock: clock, script: ["slot": [.fill(), .fill(latency: .seconds(2))]], fallback: .fill())
        let controller = BannerRefreshController(
            network: network, request: request, policy: .init(preloadAfterImpression: false), clock: clock,
            drawsEveryShownAd: true)
        await controller.start()
        try await eventually("the first impression") { network.reportedEvents.count == 1 }
        await clock.advance(by: .seconds(30))
        try await eventually("the refresh load in flight") { network.loadCount == 2 }

        await controller.stop()
        let loads = network.loadCount, reported = network.reportedEvents.count
        await simulate(clock, minutes: 5)

        #expect(network.loadCount == loads)
        #expect(network.reportedEvents.count == reported)
        #expect(await controller.currentAd == nil)
        #expect(await controller.nextRefresh == nil)
    }

    @Test func aReleasedBannerLoadsAndReportsNothingMore() async throws {
        let clock = ManualAdClock()
        let network = ScriptedAdNetwork(id: "n", clock: clock, fallback: .fill())
        var banner: ChartboostBanner? = ChartboostBanner(
            size: .standard, location: "slot", network: network, clock: clock, drawsEveryShownAd: true)
        weak let released = banner
        await banner?.show()
        try await eventually("the first impression") { network.reportedEvents.count == 1 }
        await clock.advance(by: .seconds(30))
        try await eventually("the first refresh") { network.reportedEvents.count == 2 }

        banner = nil
        try await eventually("the banner to be released") { released == nil }
        let loads = network.loadCount, reported = network.reportedEvents.count
        await simulate(clock, minutes: 5)

        #expect(network.loadCount == loads, "zero requests after the release")
        #expect(network.reportedEvents.count == reported, "zero events after the release")
    }

    @Test func aStoppedBannerLoadsNothingMoreUntilShownAgain() async throws {
        let clock = ManualAdClock()
        let network = ScriptedAdNetwork(id: "n", clock: clock, fallback: .fill())
        let banner = ChartboostBanner(
            size: .standard, location: "slot", network: network, clock: clock, drawsEveryShownAd: true)
        await banner.show()
        try await eventually("the first impression") { network.reportedEvents.count == 1 }
        try await eventually("the preload after the impression") { network.loadCount == 2 }
        await banner.stop()
        let loads = network.loadCount, reported = network.reportedEvents.count
        await simulate(clock, minutes: 5)
        #expect(network.loadCount == loads, "no request while stopped")
        #expect(network.reportedEvents.count == reported, "no event while stopped")
        await banner.show()
        try await eventually("an impression after show() again") { network.reportedEvents.count == reported + 1 }
        await banner.stop()
    }
}

// 1 200 simulated refreshes, each waited for on the real scheduler: ~50 s inside the parallel suite on an idle
// machine, 72 s with two CPU-bound processes beside it (scripts/suite-under-load.sh): the deadline is above both.
@Suite("Banner bounds over hours of refreshes", .timeLimit(.minutes(5)))
struct BannerBoundsTests {
    @Test func unreadEventsStayUnderTheLimitOverTenHoursOfRefreshes() async throws {
        let clock = ManualAdClock()
        let network = ScriptedAdNetwork(id: "n", clock: clock, fallback: .fill())
        var controller: BannerRefreshController? = BannerRefreshController(
            network: network, request: AdRequest(placement: "slot", format: .banner(.standard)),
            policy: .init(preloadAfterImpression: false), clock: clock, drawsEveryShownAd: true)
        weak let released = controller
        let events = try #require(controller).events
        await controller?.start()
        // Nobody reads `events` while the banner refreshes every 30 s for 10 simulated hours.
        for _ in 0..<1200 {
            await clock.advance(by: .seconds(30))
            // Each refresh has loaded, shown and armed the next timer before the clock moves on (5 s at most).
            let due = clock.now + .seconds(30), deadline = ContinuousClock.now + .seconds(5)
            while await controller?.nextRefresh != due && ContinuousClock.now < deadline { await Task.pollPause() }
        }
        #expect(network.loadCount > 500, "the banner refreshed through the hours (\(network.loadCount) loads)")
        #expect(await controller?.history.count == BannerRefreshController.historyLimit)
        controller = nil  // its deinit finishes `events`
        try await eventually("the controller to be released") { released == nil }
        var buffered = 0
        for await _ in events { buffered += 1 }
        #expect(buffered == BannerRefreshController.historyLimit, "the oldest unread events were dropped at the limit")
    }
}

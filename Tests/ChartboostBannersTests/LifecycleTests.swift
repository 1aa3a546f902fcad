import AdMediation
import AdMediationTesting
import AdNetworkConformance
import Foundation
import TestSupport
import Testing

@testable import AdPresentation
@testable import ChartboostBanners

/// Waits until `condition` holds, failing the test after `seconds` of real time (never loops forever). The wait ends
/// at the event itself, so the default is a hang guard far above what any scenario needs on a loaded machine.
func eventually(_ what: String, within seconds: Int = 30, _ condition: () async -> Bool) async throws {
    let deadline = ContinuousClock.now + .seconds(seconds)
    while await !condition() {
        guard ContinuousClock.now < deadline else {
            Issue.record("timed out after \(seconds) s waiting for \(what)")
            throw CancellationError()
        }
        try await Task.sleep(for: .milliseconds(1))
    }
}

/// Five simulated minutes in 30 s steps (the refresh interval): a refresh timer left on the clock would fire ten
/// times. The tests check first that no timer of the ended banner is left (`sleeperCount`), so the rule does not rest
/// on how many scheduler turns the woken tasks got.
func simulateFiveMinutes(_ clock: ManualAdClock) async {
    await advanceInSteps(clock, .seconds(300), step: .seconds(30))
}

/// Each test waits for the events its rule is about (a load counted by the network, a timer registered with the
/// manual clock, a release, a cancelled load), not for a number of scheduler turns: on a busy machine the woken tasks
/// run late, never wrongly.
@Suite("Banner lifecycles: nothing is loaded or reported after the owner ends", .timeLimit(.minutes(2)))
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
        try await eventually("the refresh timer registered with the clock") { clock.sleeperCount == 1 }
        await clock.advance(by: .seconds(30))
        try await eventually("the refresh load in flight, sleeping on the clock") {
            network.loadCount == 2 && clock.sleeperCount == 1
        }

        controller = nil
        try await eventually("the controller to be released") { released == nil }
        try await eventually("the load in flight cancelled") { network.cancellationCount == 1 }
        #expect(clock.sleeperCount == 0, "no timer or load of the released controller is left on the clock")
        let loads = network.loadCount, reported = network.reportedEvents.count
        await simulateFiveMinutes(clock)

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
        try await eventually("the refresh timer registered with the clock") { clock.sleeperCount == 1 }
        await clock.advance(by: .seconds(30))
        try await eventually("the refresh load in flight, sleeping on the clock") {
            network.loadCount == 2 && clock.sleeperCount == 1
        }

        await controller.stop()
        try await eventually("the load in flight cancelled") { network.cancellationCount == 1 }
        #expect(clock.sleeperCount == 0, "no timer or load of the stopped controller is left on the clock")
        let loads = network.loadCount, reported = network.reportedEvents.count
        await simulateFiveMinutes(clock)

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
        try await eventually("the refresh timer registered with the clock") { clock.sleeperCount == 1 }
        await clock.advance(by: .seconds(30))
        try await eventually("the first refresh") { network.reportedEvents.count == 2 }
        // The first load, the preload after each impression: nothing is left to start when the banner goes.
        try await eventually("the preload after the refresh") { network.loadCount == 3 }
        try await eventually("the next refresh timer registered with the clock") { clock.sleeperCount == 1 }

        banner = nil
        try await eventually("the banner to be released") { released == nil }
        try await eventually("its refresh timer to end with it") { clock.sleeperCount == 0 }
        let loads = network.loadCount, reported = network.reportedEvents.count
        await simulateFiveMinutes(clock)

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
        try await eventually("the refresh timer registered with the clock") { clock.sleeperCount == 1 }
        await banner.stop()
        #expect(clock.sleeperCount == 0, "stop() ended the refresh timer")
        let loads = network.loadCount, reported = network.reportedEvents.count
        await simulateFiveMinutes(clock)
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
            // Each refresh has loaded, shown and armed the next timer before the clock moves on (waited for: the
            // 30 s is a hang guard, not a measure).
            let due = clock.now + .seconds(30), deadline = ContinuousClock.now + .seconds(30)
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

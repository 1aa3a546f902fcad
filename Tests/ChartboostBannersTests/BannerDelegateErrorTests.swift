import AdMediation
import AdMediationTesting
import DemandSandbox
import Foundation
import TestSupport
import Testing

@testable import ChartboostBanners

/// A load failure the sandbox can be made to answer, and the code the delegate must see for it.
enum SandboxLoadFailure: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case noFill = "no fill", unauthorized = "401", rateLimited = "429"

    var scenario: SandboxScenario {
        switch self {
        case .noFill: SandboxScenario(networks: ["chartboost": NetworkScenario(fillRate: 0)])
        case .unauthorized: SandboxScenario()
        case .rateLimited:
            SandboxScenario(networks: [
                "chartboost": NetworkScenario(faults: [Fault(.status, status: 429, retryAfterS: 9)])
            ])
        }
    }
    /// The app signature: a wrong one is refused with 401.
    var signature: String { self == .unauthorized ? "wrong-secret" : secret }
    var code: AdError.Code {
        switch self {
        case .noFill: .noFill
        case .unauthorized: .unauthorized
        case .rateLimited: .rateLimited(retryAfter: .seconds(9))
        }
    }
    var testDescription: String { rawValue }
}

// Over the real sandbox: the limit is a hang guard (a minute was passed with the suite, two CPU hogs and another
// build beside it); each wait inside ends at its event.
@Suite("Banner delegate errors say what happened", .timeLimit(.minutes(2)))
struct BannerDelegateErrorTests {
    /// Seed (didClickAd): "If the click does not result into the opening of a link an error will be provided
    /// explaining why."
    @Test func aDeclinedConfirmationSendsDidClickAdWithAnErrorSayingItWasDeclined() async throws {
        try await withChartboost { network, sandbox, _ in
            let delegate = ClickRecorder(confirmClicks: true)
            let banner = ChartboostBanner(
                size: .standard, location: "Main Menu", network: network, delegate: delegate, drawsEveryShownAd: true)
            await banner.setAutomaticallyRefreshesContent(false)
            await banner.cache()
            await banner.show()
            let shown = await banner.displayedAd?.creative.id
            await banner.click()
            delegate.answer(false)
            try await eventually("didClickAd") { !delegate.calls("didClickAd").isEmpty }
            let call = try #require(delegate.calls("didClickAd").first)
            #expect(call.adID == shown)
            #expect(call.error?.code == .cancelled)
            #expect(call.error?.reason == .bannerClickDeclined)
            #expect(call.error?.message.contains("declined") == true, "\(String(describing: call.error))")
            await network.shutdown()  // whatever was queued is sent
            #expect(sandbox.records.trackingHits.map { $0.query["e"] } == ["impression"], "no click tracked")
        }
    }

    /// Seed (didCacheAd): "Parameter error: An error specifying the failure reason" — in auto-refresh mode too
    /// ("gracefully handling errors if they occur"): the delegate gets the load's own code, as `cache()` gives it.
    @Test(arguments: SandboxLoadFailure.allCases)
    func inAutoRefreshModeALoadFailureReachesTheDelegateWithItsRealCode(failure: SandboxLoadFailure) async throws {
        let clock = ManualAdClock()
        try await withChartboost(failure.scenario, signature: failure.signature, clock: clock) { network, _, _ in
            let manual = ClickRecorder()
            let cached = ChartboostBanner(
                size: .standard, location: "Main Menu", network: network, delegate: manual, drawsEveryShownAd: true)
            await cached.setAutomaticallyRefreshesContent(false)
            await cached.cache()
            #expect(manual.calls("didCacheAd").first?.error?.code == failure.code, "the non-refresh path")

            let delegate = ClickRecorder()
            let banner = ChartboostBanner(
                size: .standard, location: "Main Menu", network: network, delegate: delegate, clock: clock,
                drawsEveryShownAd: true)
            await banner.show()
            try await eventually("didCacheAd with the error") { !delegate.calls("didCacheAd").isEmpty }
            #expect(delegate.calls("didCacheAd").first?.error?.code == failure.code)
            await banner.stop()
        }
    }

    /// Seed: "If you decide to disable banner auto-refreshing you can do that by setting the
    /// automaticallyRefreshesContent property to NO." — the ad on screen stays there, and stays valid.
    @Test func turningAutoRefreshOffKeepsTheAdOnScreenAndValid() async throws {
        let clock = ManualAdClock()
        try await withChartboost(clock: clock) { network, sandbox, _ in
            let banner = ChartboostBanner(
                size: .standard, location: "Main Menu", network: network, clock: clock, drawsEveryShownAd: true)
            await banner.show()
            try await eventually("the first impression") { sandbox.records.trackingHits.count == 1 }
            let onScreen = try #require(await banner.displayedAd)
            await banner.setAutomaticallyRefreshesContent(false)
            #expect(await banner.displayedAd === onScreen, "still on screen")
            #expect(!onScreen.isInvalidated, "still valid")
            await banner.click()
            try await eventually("the click's ping") { sandbox.records.trackingHits.count == 2 }
            #expect(
                sandbox.records.trackingHits.map { "\($0.query["e"] ?? "")/\($0.query["ad"] ?? "")" } == [
                    "impression/\(onScreen.creative.id)", "click/\(onScreen.creative.id)",
                ], "a click on it is still tracked")
            await banner.stop()
        }
    }

    @Test func turningAutoRefreshOffStopsTheRefresh() async throws {
        let clock = ManualAdClock()
        try await withChartboost(clock: clock) { network, sandbox, http in
            let banner = ChartboostBanner(
                size: .standard, location: "Main Menu", network: network, clock: clock, drawsEveryShownAd: true)
            await banner.show()
            try await eventually("the first impression") { sandbox.records.trackingHits.count == 1 }
            // The preload after the impression is done: no load is in flight when auto-refresh goes off.
            try await eventually("the preload") { await banner.refreshController?.hasPreloadedAd == true }
            await banner.setAutomaticallyRefreshesContent(false)
            // Loads only: a tracking ping retried on the clock (its real-time timeout can pass on a busy machine) is
            // not a load.
            let loads = { http.requestTexts.filter { $0.contains("/banner/v1/load") }.count }
            let before = loads()
            await advanceInSteps(clock, .seconds(300), step: .seconds(30))
            #expect(loads() == before, "no load after auto-refresh is off")
            #expect(await banner.refreshController == nil)
            await banner.stop()
        }
    }

    /// Turning auto-refresh back on and calling `show()` goes on from the ad on screen: no blank, no second
    /// impression for it, and the next refresh after a full interval.
    @Test func turningAutoRefreshBackOnGoesOnFromTheAdOnScreen() async throws {
        let clock = ManualAdClock()
        try await withChartboost(clock: clock) { network, sandbox, _ in
            let banner = ChartboostBanner(
                size: .standard, location: "Main Menu", network: network, clock: clock, drawsEveryShownAd: true)
            await banner.show()
            try await eventually("the first impression") { sandbox.records.trackingHits.count == 1 }
            let first = try #require(await banner.displayedAd)
            await banner.setAutomaticallyRefreshesContent(false)
            await banner.setAutomaticallyRefreshesContent(true)
            await banner.show()
            #expect(await banner.displayedAd === first)
            let controller = try #require(await banner.refreshController)
            #expect(await controller.nextRefresh == clock.now + .seconds(30))
            await clock.advance(by: .seconds(30))
            try await eventually("the refresh") { await banner.displayedAd !== first }
            let next = try #require(await banner.displayedAd).creative.id
            // The impressions the controller logged (its history): the wire's pings go through a sender whose
            // real-time timeout can pass on a busy machine, its retry then waiting on this manual clock.
            try await eventually("its impression") { await controller.history.contains(.impression(adID: next)) }
            #expect(
                !(await controller.history.contains(.impression(adID: first.creative.id))),
                "no second impression for the ad that stayed on screen")
            #expect(first.isInvalidated, "the replaced ad is done")
            await banner.stop()
        }
    }
}

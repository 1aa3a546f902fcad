import AdMediation
import AdMediationTesting
import AdPresentation
import CurlTransport
import Foundation
import Testing

@testable import ChartboostBanners

/// A Chartboost-style server on loopback: every load fills with `ad1`, `ad2`…, tracking is recorded, and click
/// tracking can be held in flight until ``releaseClicks()`` (or 10 s at most).
final class HeldClickServer: Sendable {
    private struct State {
        var serial = 0
        var hits: [(event: String, ad: String)] = []
        var holdClicks: Bool
        var clicksArrived = 0
    }

    /// Shared by the server's connection threads and the test.
    private final class Shared: Sendable {
        let state: LockedValue<State>
        init(_ state: State) { self.state = LockedValue(state) }
    }

    private let shared: Shared
    private let server: LoopbackHTTPServer

    init(holdClicks: Bool = false) throws {
        let shared = Shared(State(holdClicks: holdClicks))
        self.shared = shared
        server = try LoopbackHTTPServer { Self.handle($0, shared) }
    }

    var baseURL: String { server.baseURL }
    /// The ads whose `event` tracking arrived, in order.
    func hits(_ event: String) -> [String] { shared.state.withLock { $0.hits.filter { $0.event == event }.map(\.ad) } }
    /// Click requests received (held or not).
    var clicksArrived: Int { shared.state.withLock { $0.clicksArrived } }
    /// Lets held click requests answer.
    func releaseClicks() { shared.state.withLock { $0.holdClicks = false } }
    func stop() {
        releaseClicks()
        server.stop()
    }

    private static func handle(_ request: LoopbackHTTPServer.Request, _ shared: Shared) -> LoopbackHTTPServer.Action {
        if request.method == "POST" && request.path.hasSuffix("/banner/v1/load") {
            let id = shared.state.withLock { s in
                s.serial += 1
                return "ad\(s.serial)"
            }
            let track = "http://\(request.header("Host") ?? "127.0.0.1")/banner/v1/track"
            let body = """
                {"ad_id": "\(id)", "location": "Main Menu", "size": {"width": 320, "height": 50},
                 "creative": {"type": "image", "url": "https://cdn.example/\(id).png"},
                 "click_url": "https://advertiser.example/\(id)",
                 "tracking": {"impression": "\(track)?e=impression&ad=\(id)", "click": "\(track)?e=click&ad=\(id)"},
                 "ecpm": 1, "expires_in_seconds": 3600}
                """
            return .respond(.init(headers: [("Content-Type", "application/json")], body: Array(body.utf8)))
        }
        if request.method == "GET" && request.path.hasSuffix("/banner/v1/track") {
            let query = URLComponents(string: request.target)?.queryItems ?? []
            let event = query.first { $0.name == "e" }?.value ?? ""
            let ad = query.first { $0.name == "ad" }?.value ?? ""
            let hold = shared.state.withLock { s in
                s.hits.append((event, ad))
                if event == "click" { s.clicksArrived += 1 }
                return event == "click" && s.holdClicks
            }
            if hold {
                // The click request stays in flight until the test releases it (never longer than 30 s).
                let deadline = ContinuousClock.now + .seconds(30)
                while shared.state.withLock({ $0.holdClicks }) && ContinuousClock.now < deadline {
                    Thread.sleep(forTimeInterval: 0.001)
                }
            }
            return .respond(.init(status: 204))
        }
        return .respond(.text("not found", status: 404))
    }
}

/// Records delegate calls with the ad they name; holds the confirmation handler when `confirmClicks`.
final class ClickRecorder: ChartboostBannerDelegate {
    struct Call: Sendable, Equatable {
        var name: String
        var adID: String?
        var error: AdError?
    }

    private let state = LockedValue<(calls: [Call], handler: ClickConfirmationHandler?)>(([], nil))
    let confirmClicks: Bool

    init(confirmClicks: Bool = false) { self.confirmClicks = confirmClicks }

    var calls: [Call] { state.withLock { $0.calls } }
    func calls(_ name: String) -> [Call] { calls.filter { $0.name == name } }
    /// Answers the pending confirmation gate.
    func answer(_ confirmed: Bool) { state.withLock { $0.handler }?(confirmed) }

    private func add(_ name: String, _ event: BannerAdEvent, _ error: AdError?) {
        state.withLock { $0.calls.append(Call(name: name, adID: event.adID, error: error)) }
    }
    func didCacheAd(_ event: BannerAdEvent, error: AdError?) { add("didCacheAd", event, error) }
    func willShowAd(_ event: BannerAdEvent, error: AdError?) { add("willShowAd", event, error) }
    func didShowAd(_ event: BannerAdEvent, error: AdError?) { add("didShowAd", event, error) }
    func didClickAd(_ event: BannerAdEvent, error: AdError?) { add("didClickAd", event, error) }
    func didFinishHandlingClick(_ event: BannerAdEvent, error: AdError?) { add("didFinishHandlingClick", event, error) }
    func shouldConfirmClick(_ event: BannerAdEvent, confirmationHandler: ClickConfirmationHandler) -> Bool {
        add("shouldConfirmClick", event, nil)
        if confirmClicks { state.withLock { $0.handler = confirmationHandler } }
        return confirmClicks
    }
}

/// A banner over real loopback HTTP against a ``HeldClickServer``, on a manual clock.
struct HeldClickHarness {
    let server: HeldClickServer
    let curl: CurlHTTPClient
    let clock: ManualAdClock
    let delegate: ClickRecorder
    let banner: ChartboostBanner

    init(holdClicks: Bool = false, confirmClicks: Bool = false) throws {
        server = try HeldClickServer(holdClicks: holdClicks)
        curl = CurlHTTPClient()
        clock = ManualAdClock()
        delegate = ClickRecorder(confirmClicks: confirmClicks)
        let network = ChartboostNetwork(
            configuration: .init(baseURL: server.baseURL, appID: "a", appSignature: "s"), http: curl, clock: clock)
        banner = ChartboostBanner(
            size: .standard, location: "Main Menu", network: network, delegate: delegate, clock: clock,
            drawsEveryShownAd: true)
    }

    /// Shows the banner in auto-refresh mode and waits for `ad1`'s impression and the preload of `ad2`.
    func showFirstAd() async throws -> BannerRefreshController {
        await banner.show()
        let controller = try #require(await banner.refreshController)
        try await eventually("the first impression") { server.hits("impression") == ["ad1"] }
        try await eventually("the next ad preloaded") { await controller.hasPreloadedAd }
        return controller
    }

    func shutdown() async {
        await banner.stop()
        server.stop()
        await curl.shutdown()
    }
}

@Suite("Banner clicks belong to the tapped ad", .timeLimit(.minutes(1)))
struct BannerClickAttributionTests {
    /// Seed (shouldConfirmClick): "make sure to execute the confirmationHandler at some point, since the ad flow will
    /// be paused until then."
    @Test func autoRefreshPausesWhileAClickWaitsForItsConfirmation() async throws {
        let h = try HeldClickHarness(confirmClicks: true)
        let controller = try await h.showFirstAd()
        await h.banner.click()
        #expect(await h.banner.isClickPending)
        await h.clock.advance(by: .seconds(90))  // three refresh intervals while the gate is up
        #expect(shownIDs(await controller.history) == ["ad1"], "no refresh while the click waits")
        #expect(await h.banner.displayedAd?.creative.id == "ad1")
        h.delegate.answer(true)
        // Seed: "Banners will be also refreshed once clicked."
        try await eventually("the refresh after the click") { shownIDs(await controller.history).count >= 2 }
        await h.shutdown()
    }

    /// Seed (didClickAd): "Called after an ad has been clicked." — the ad clicked is the one that was on screen when
    /// tapped, however long the confirmation took.
    @Test func aClickConfirmedLateIsTrackedForTheAdThatWasTapped() async throws {
        let h = try HeldClickHarness(confirmClicks: true)
        _ = try await h.showFirstAd()
        await h.banner.click()
        await h.clock.advance(by: .seconds(90))
        h.delegate.answer(true)
        try await eventually("didClickAd") { !h.delegate.calls("didClickAd").isEmpty }
        try await eventually("the click tracking") { h.server.clicksArrived >= 1 }
        #expect(h.server.hits("click") == ["ad1"], "tracked with the tapped ad's URL, never a newer ad's")
        #expect(h.delegate.calls("didClickAd") == [.init(name: "didClickAd", adID: "ad1", error: nil)])
        await h.shutdown()
    }

    /// Issue 42: `didClickAd` waited for the click-tracking request (up to its 10 s timeout), and the banner's flow
    /// with it. The click is the user's, at once: `didClickAd` comes with no error while the tracker still holds the
    /// request, and the refresh after the click goes ahead (the ping is retried in the background).
    @Test func didClickAdAndTheRefreshNeverWaitForTheClickTrackingRequest() async throws {
        let h = try HeldClickHarness(holdClicks: true)
        let controller = try await h.showFirstAd()
        await h.banner.click()  // returns while the tracker holds the request
        #expect(h.delegate.calls("didClickAd") == [.init(name: "didClickAd", adID: "ad1", error: nil)])
        try await eventually("the click request in flight") { h.server.clicksArrived == 1 }
        await h.clock.advance(by: .seconds(30))
        try await eventually("the refresh after the click") { shownIDs(await controller.history).count >= 2 }
        h.server.releaseClicks()
        await h.shutdown()
    }

    /// Seed (didClickAd): "Called after an ad has been clicked." — a refresh due during the click request never makes
    /// the new ad count as clicked.
    @Test func aRefreshDueDuringAClickRequestNeverTracksAClickForTheNewAd() async throws {
        let h = try HeldClickHarness(holdClicks: true)
        let controller = try await h.showFirstAd()
        let click = Task { await h.banner.click() }
        try await eventually("the click request in flight") { h.server.clicksArrived == 1 }
        await h.clock.advance(by: .seconds(30))
        h.server.releaseClicks()
        await click.value
        try await eventually("the refresh after the click") { shownIDs(await controller.history).count >= 2 }
        try await eventually("the new ad's impression") { h.server.hits("impression").count >= 2 }
        #expect(h.server.hits("click") == ["ad1"], "one click, the tapped ad's")
        #expect(h.delegate.calls("didClickAd").map(\.adID) == ["ad1"])
        await h.shutdown()
    }

    /// Seed (shouldConfirmClick): "A click event with info related to the ad clicked." — when the app shows another
    /// ad while the gate is up (auto-refresh off), the confirmed click is still the tapped ad's, and that ad stays
    /// valid until its click is reported.
    @Test func anAdShownWhileAClickWaitsNeverRetargetsTheClick() async throws {
        let h = try HeldClickHarness(confirmClicks: true)
        await h.banner.setAutomaticallyRefreshesContent(false)
        await h.banner.cache()
        await h.banner.show()
        let tapped = try #require(await h.banner.displayedAd)
        await h.banner.click()
        await h.banner.cache()
        await h.banner.show()  // ad2 lands while the gate is up
        #expect(await h.banner.displayedAd?.creative.id == "ad2")
        h.delegate.answer(true)
        try await eventually("didClickAd") { !h.delegate.calls("didClickAd").isEmpty }
        #expect(h.delegate.calls("didClickAd") == [.init(name: "didClickAd", adID: "ad1", error: nil)])
        try await eventually("the click's ping") { h.server.clicksArrived >= 1 }
        #expect(h.server.hits("click") == ["ad1"])
        try await eventually("the tapped ad invalidated once its click is done") { tapped.isInvalidated }
        await h.shutdown()
    }
}

import AdMediation
import AdMediationServices
import AdMediationTesting
import Foundation
import Logging
import ServiceLifecycle
import Testing

@testable import GrowthCatAds

/// A presenter that plays the test's script of renderer signals.
private struct PlayingPresenter: FullScreenPresenter {
    let script: @Sendable (FullScreenControls) async -> Void
    func present(_ ad: LoadedAd, controls: FullScreenControls) async { await script(controls) }
}

/// The events the server accepted (2xx batches), in order, as JSON objects.
private func acceptedEvents(_ server: ScriptedGrowthCat) -> [[String: Any]] {
    server.received("/ads/events").filter { (200..<300).contains($0.status) }.flatMap { request in
        let object = (try? JSONSerialization.jsonObject(with: Data(request.body))) as? [String: Any]
        return object?["events"] as? [[String: Any]] ?? []
    }
}

/// The quartiles through the API an app uses (`LoadedAd.presentFullScreen`) against a server that logs every event.
@Suite("GrowthCat: video events through the mediated API", .timeLimit(.minutes(1)))
struct MediatedQuartileTests {
    /// A video interstitial whose server sent no duration: only the renderer knows the length.
    static let videoWithoutDuration =
        #"{"cache_ttl_seconds":300,"ads":[{"placement":{"key":"p","format":"interstitial"},"campaign":{"id":"c"},"#
        + #""creative":{"id":"v1","creative_type":"video","public_asset_url":"https://x/v.mp4"},"#
        + #""tracking":{"allocation_id":"a1","token":"t1"}}]}"#

    /// `video_progress(25)` or the plain event name, as the server received them, in order.
    func received(_ server: ScriptedGrowthCat) -> [String] {
        acceptedEvents(server).map { event in
            let name = event["event_name"] as? String ?? "?"
            let percent = (event["metadata"] as? [String: Any])?["progress_pct"].map { "\($0)" }
            return percent.map { "\(name)(\($0))" } ?? name
        }
    }

    /// Loads the video without a duration from a fresh server and presents it with `script`; returns the events the
    /// server accepted and the presentation's log.
    func present(
        _ script: @escaping @Sendable (FullScreenControls) async -> Void
    ) async throws -> (events: [String], result: FullScreenResult) {
        let server = try ScriptedGrowthCat()
        server.script("/ads/catalog", [.init(status: 200, body: Self.videoWithoutDuration)])
        let clock = ManualAdClock()
        let (client, curl) = try scriptedClient(server, clock: clock)
        defer { server.server.stop() }
        let network = GrowthCatNetwork(client: client, clock: clock)
        let ad = try #require(try await network.load(AdRequest(placement: "p", format: .interstitial)).ad)
        let result = try await ad.presentFullScreen(on: PlayingPresenter(script: script), clock: clock)
        let events = received(server)
        await curl.shutdown()
        return (events, result)
    }

    /// Seed: "video_start + impression fire when playback begins", "video_progress fires at 25%, 50%, and 75%",
    /// "video_complete fires when video reaches the end" — with no duration from the server, the renderer's length
    /// and played position drive them.
    @Test func theRenderersProgressDrivesTheQuartilesOfAVideoWithoutADuration() async throws {
        let (events, result) = try await present { controls in
            await controls.renderBegan()
            await controls.playbackStarted()
            await controls.playbackProgressed(to: .seconds(3), of: .seconds(10))
            await controls.playbackProgressed(to: .seconds(8), of: .seconds(10))
            await controls.playbackEnded()
            _ = await controls.closeTapped()
        }
        #expect(result.log.filter(\.isFailure).isEmpty, "\(result.log)")
        #expect(
            events == [
                "impression", "video_start", "video_progress(25)", "video_progress(50)", "video_progress(75)",
                "video_complete", "ad_closed",
            ])
    }

    /// A video that stops at 40 % (the renderer fails) earns the 25 % quartile only: nothing more is reported.
    @Test func aVideoThatFailsAtFortyPercentReportsOnlyTheQuartileItPlayed() async throws {
        let (events, _) = try await present { controls in
            await controls.playbackStarted()
            await controls.playbackProgressed(to: .seconds(4), of: .seconds(10))
            await controls.playbackFailed("decoder error")
            await controls.playbackEnded()
            _ = await controls.closeTapped()
        }
        #expect(events == ["impression", "video_start", "video_progress(25)", "ad_closed"])
    }
}

@Suite("GrowthCat: occurred_at is when it happened", .timeLimit(.minutes(1)))
struct OccurredAtTests {
    /// Seed (events): `occurred_at` — the event's own time: an event handed over 30 s after its signal carries the
    /// signal's time, not the time it was queued.
    @Test func anEventDeliveredWithAnAgeIsStampedWithItsSignalsTime() async throws {
        let server = try ScriptedGrowthCat()
        let wall = Date(timeIntervalSince1970: 1_800_000_000)
        let (client, curl) = try scriptedClient(server) { $0.now = { wall } }
        let network = GrowthCatNetwork(client: client)
        let ad = try #require(try await network.load(AdRequest(placement: "p", format: .interstitial)).ad)
        _ = try await ad.deliver(.impression, age: .seconds(30))
        _ = await client.flushAdEvents()
        let stamps = acceptedEvents(server).compactMap { $0["occurred_at"] as? String }
        #expect(stamps == [wall.addingTimeInterval(-30).formatted(.iso8601)])
        await curl.shutdown()
        server.server.stop()
    }
}

@Suite("GrowthCat: the network ends what it runs", .timeLimit(.minutes(1)))
struct GrowthCatFactoryShutdownTests {
    /// Issue 32 item 2: `mediate` runs every network that works in the background as a `Service` of its group;
    /// GrowthCat's must end the client's background work when the group shuts down (a factory's no-op shutdown let
    /// the delivery loop and timers outlive the run).
    @Test func theNetworksServiceShutsTheClientDownAtTheGroupsGracefulShutdown() async throws {
        let server = try ScriptedGrowthCat()
        let (client, curl) = try scriptedClient(server)
        let network = GrowthCatNetwork(client: client)
        #expect(await client.isShutDown == false)
        let group = ServiceGroup(services: [BackgroundWorkService(network)], logger: Logger(label: "test"))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
        #expect(await client.isShutDown, "the client's delivery loop, timers and probe were ended")
        await curl.shutdown()
        server.server.stop()
    }
}

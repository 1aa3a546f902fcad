import AdMediation
import AdMediationTesting
import CurlTransport
import Foundation
import Testing

@testable import GrowthCatAds

/// Issue 45, "durable queue": "`shutdown()` waits for an in-flight events POST up to the whole request timeout (a
/// slowloris endpoint: 9.98 s)" — "shutdown cancels in-flight delivery after a short documented grace (the rows stay
/// queued)". The events endpoint accepts the connection and never answers; the request timeout is 10 minutes, so only
/// the grace (1 s on the client's manual clock) can end the POST within the suite's time limit.
@Suite("GrowthCat shutdown: an events POST in flight is cancelled after a grace", .timeLimit(.minutes(1)))
struct ShutdownGraceTests {
    @Test func shutdownCancelsAnEventsPostThatNeverAnswersAfterItsGraceAndTheEventsStayQueued() async throws {
        let server = try LoopbackHTTPServer { _ in .silent }
        let curl = CurlHTTPClient()
        let clock = ManualAdClock()
        var configuration = GrowthCatClient.Configuration(
            apiKey: "k", baseURL: server.baseURL, eventQueuePath: queuePath())
        configuration.requestTimeout = .seconds(600)
        let client = try GrowthCatClient(configuration: configuration, http: curl, clock: clock)
        try await client.trackAdEvent(.impression, for: gcAd(), placementKey: "p")  // posted at once
        #expect(await eventually { server.requestsReceived == 1 }, "the POST is in flight")
        let shutdown = Task { await client.shutdown() }
        await clock.waitForSleepers(1)  // the grace
        #expect(clock.now == .zero)
        await clock.advance(by: GrowthCatClient.shutdownGrace)
        await shutdown.value
        #expect(clock.now - .zero == GrowthCatClient.shutdownGrace, "ended by the grace, not the request timeout")
        #expect(server.requestsReceived == 1, "no second attempt")
        #expect(await client.pendingEventCount == 1, "the event stays queued for the next client")
        server.stop()
        await curl.shutdown()
    }
}

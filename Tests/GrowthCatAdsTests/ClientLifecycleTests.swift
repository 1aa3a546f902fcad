import AdMediation
import AdMediationTesting
import AdNetworkConformance
import CurlTransport
import Foundation
import TestSupport
import Testing

@testable import GrowthCatAds

@Suite("GrowthCat client lifecycle", .timeLimit(.minutes(2)))
struct GrowthCatClientLifecycleTests {
    /// A client whose server is unreachable, with a failed impression (offline, so the probe runs) and a queued
    /// batch event (batch timer): both background timers are sleeping on the returned clock.
    func offlineClientWithTimers() async throws -> (GrowthCatClient, RecordingHTTPClient, CurlHTTPClient, ManualAdClock)
    {
        let port = try LoopbackHTTPServer.refusingPort()
        let curl = CurlHTTPClient()
        let http = RecordingHTTPClient(wrapping: curl)
        let clock = ManualAdClock()
        let client = try GrowthCatClient(
            configuration: .init(apiKey: "k", baseURL: "http://127.0.0.1:\(port)", eventQueuePath: queuePath()),
            http: http, clock: clock)
        try await client.trackAdEvent(.impression, for: gcAd(), placementKey: "p")  // flushed at once: fails, offline
        try await client.trackAdEvent(.videoStart, for: gcAd(), placementKey: "p")  // waits for the batch timer
        await clock.waitForSleepers(2)  // the batch timer and the offline probe
        return (client, http, curl, clock)
    }

    @Test func aShutDownClientMakesNoRequestForFiveSimulatedMinutes() async throws {
        let (client, http, curl, clock) = try await offlineClientWithTimers()
        #expect(await client.isOffline)
        await client.shutdown()
        #expect(clock.sleeperCount == 0, "no timer of the client is left")
        let requests = http.requestCount
        await advanceInSteps(clock, .seconds(300), step: .seconds(10))
        #expect(http.requestCount == requests)
        #expect(await client.pendingEventCount == 2, "the queued events stay for the next client")
        await curl.shutdown()
    }

    @Test func aReleasedClientIsFreedAndItsTimersEnd() async throws {
        let curl: CurlHTTPClient, http: RecordingHTTPClient, clock: ManualAdClock
        weak var released: GrowthCatClient?
        do {
            let (client, h, c, k) = try await offlineClientWithTimers()
            released = client
            http = h
            curl = c
            clock = k
        }
        // Both timers were registered with the clock (`offlineClientWithTimers`); the release is waited for, not
        // assumed after some scheduler turns.
        #expect(await pollUntil { released == nil }, "its timers do not keep the client alive")
        #expect(await pollUntil { clock.sleeperCount == 0 }, "its deinit cancelled them")
        let requests = http.requestCount
        await advanceInSteps(clock, .seconds(300), step: .seconds(10))
        #expect(http.requestCount == requests)
        await curl.shutdown()
    }

    @Test func withClientShutsTheClientDownWhenTheScopeEnds() async throws {
        let port = try LoopbackHTTPServer.refusingPort()
        let curl = CurlHTTPClient()
        let clock = ManualAdClock()
        let configuration = GrowthCatClient.Configuration(
            apiKey: "k", baseURL: "http://127.0.0.1:\(port)", eventQueuePath: queuePath())
        try await GrowthCatClient.withClient(configuration: configuration, http: curl, clock: clock) { client in
            try await client.trackAdEvent(.impression, for: gcAd(), placementKey: "p")
            await clock.waitForSleepers(1)
        }
        #expect(clock.sleeperCount == 0)
        await curl.shutdown()
    }
}

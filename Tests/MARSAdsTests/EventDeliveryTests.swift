import AdMediation
import MARSAds
import TestSupport
import Testing

/// MARS has three callbacks (impression, click, report), queued and sent in the background; every other event of a
/// tile is not sent, and says so.
@Suite("MARS: how far each tile event got", .timeLimit(.minutes(1)))
struct MarsEventDeliveryTests {
    @Test func aTilesImpressionAndClickAreQueuedAndItsCloseIsNotSent() async throws {
        let f = try await marsFixture()
        let network = MarsNetwork(client: f.client)
        let ad = try #require(try await network.load(AdRequest(placement: "mock_tile_1", format: .tile)).ad)
        #expect(try await ad.deliver(.impression) == .queued, "the impression callback is sent in the background")
        #expect(try await ad.deliver(.click) == .queued)
        #expect(try await ad.deliver(.closed) == .notSent, "MARS has no close callback: nothing was sent")
        #expect(try await ad.deliver(.videoStart) == .notSent)
        // The callbacks are sent in the background: read the wire once they were (a hang guard), not at the end of
        // shutdown's 2 s grace (real clock), which a busy machine can exceed.
        #expect(await HangGuard.until { network.pendingCallbacks == 0 })
        await network.shutdown()
        #expect(f.sandbox.marsRecords.callbacks.count == 2, "only the impression and the click reached the server")
        #expect(network.pendingCallbacks == 0)
        await f.close()
    }
}

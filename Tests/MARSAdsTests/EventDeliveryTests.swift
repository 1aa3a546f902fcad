import AdMediation
import MARSAds
import Testing

/// MARS has three callbacks (impression, click, report); every other event of a tile is not sent, and says so.
@Suite("MARS: how far each tile event got", .timeLimit(.minutes(1)))
struct MarsEventDeliveryTests {
    @Test func aTilesImpressionAndClickAreDeliveredAndItsCloseIsNotSent() async throws {
        let f = try await marsFixture()
        let ad = try #require(
            try await MarsNetwork(client: f.client).load(AdRequest(placement: "mock_tile_1", format: .tile)).ad)
        #expect(try await ad.deliver(.impression) == .delivered, "the impression callback answered 200")
        #expect(try await ad.deliver(.click) == .delivered)
        #expect(try await ad.deliver(.closed) == .notSent, "MARS has no close callback: nothing was sent")
        #expect(try await ad.deliver(.videoStart) == .notSent)
        #expect(f.sandbox.records.marsCallbacks.count == 2, "only the impression and the click reached the server")
        await f.close()
    }
}

import AdMediation
import AdMediationTesting
import CurlTransport
import Foundation
import Testing

@testable import MARSAds

/// A spoc item; `valid: false` leaves out its required `title`.
func spocJSON(_ id: String, valid: Bool = true) -> String {
    let title = valid ? #""title":"T\#(id)","# : ""
    return
        (#"{"format":"spoc","url":"https://a.example/\#(id)","image_url":"https://img.example/\#(id).png","#
        + ((#""block_key":"bk_\#(id)",\#(title)"domain":"d.example","#
            + #""excerpt":"E","sponsor":"S","caps":{"cap_key":"ck_\#(id)","#)
            + (#""day":3},"ranking":{"priority":1,"item_score":0.5},"#
                + #""callbacks":\#(callbackJSON(id, report: "\"https://t.example/r\""))}"#)))
}

@Suite("MARS: each item is decoded on its own", .timeLimit(.minutes(1)))
struct MarsItemDecodingTests {
    /// Spec: "Each item is decoded on its own. An item that fails is dropped and reported to telemetry
    /// (record_deserialization_error("invalid_ad_item", …)); the other items stay."
    @Test func aTileMissingARequiredFieldIsDroppedAndTheValidTileAfterItFills() async throws {
        let broken =
            (#"{"format":"tile","url":"https://a.example/x","image_url":"https://img.example/x.png","#
                + #""block_key":"bk_x","callbacks":\#(callbackJSON("x"))}"#)
        let (client, server, curl, telemetry) = try craftedClient(
            body: #"{"mock_tile_1":[\#(broken),\#(tileJSON("good"))]}"#)
        let tiles = try await client.requestTileAds(tile1)
        #expect(tiles["mock_tile_1"]?.blockKey == "bk_good")
        #expect(telemetry.log.contains("deser:invalid_ad_item"))
        await curl.shutdown()
        server.stop()
    }

    @Test func spocsKeepEveryValidItemAndReportPositionsCountValidItemsOnly() async throws {
        let items = [spocJSON("a", valid: false), spocJSON("b"), spocJSON("c", valid: false), spocJSON("d")]
        let body = #"{"spocs":["# + items.joined(separator: ",") + "]}"
        let (client, server, curl, telemetry) = try craftedClient(body: body)
        let spocs = try #require(try await client.requestSpocAds([.init(count: 4, placementId: "spocs")])["spocs"])
        #expect(spocs.map(\.blockKey) == ["bk_b", "bk_d"])
        #expect(spocs[0].callbacks.report?.hasSuffix("position=0") == true)
        #expect(
            spocs[1].callbacks.report?.hasSuffix("position=1") == true, "the invalid items before it are not counted")
        #expect(telemetry.log.filter { $0 == "deser:invalid_ad_item" }.count == 2)
        await curl.shutdown()
        server.stop()
    }

    @Test func aPlacementThatIsNotAnArrayIsReportedAsInvalidArray() async throws {
        let (client, server, curl, telemetry) = try craftedClient(body: #"{"mock_tile_1": {"not": "a list"}}"#)
        let tiles = try await client.requestTileAds(tile1)
        #expect(tiles.isEmpty)
        #expect(telemetry.log.contains("deser:invalid_array"))
        await curl.shutdown()
        server.stop()
    }

    @Test func aBodyThatIsNotAnObjectIsReportedAsInvalidStructureAndThrown() async throws {
        let (client, server, curl, telemetry) = try craftedClient(body: #"[1, 2, 3]"#)
        await #expect(throws: AdError.self) { try await client.requestTileAds(tile1) }
        #expect(telemetry.log.contains("deser:invalid_structure"))
        await curl.shutdown()
        server.stop()
    }

    @Test func theNetworkFillsFromTheFirstValidItem() async throws {
        let broken = #"{"format":"tile","callbacks":\#(callbackJSON("x"))}"#
        let (client, server, curl, _) = try craftedClient(body: #"{"mock_tile_1":[\#(broken),\#(tileJSON("good"))]}"#)
        let network = MarsNetwork(client: client)
        let ad = try #require(try await network.load(AdRequest(placement: "mock_tile_1", format: .tile)).ad)
        #expect(ad.creative.id == "bk_good")
        await curl.shutdown()
        server.stop()
    }
}

@Suite("MARS: single flight per cache key", .timeLimit(.minutes(1)))
struct MarsSingleFlightTests {
    @Test func twoIdenticalRequestsInFlightShareOneNetworkCall() async throws {
        let server = try LoopbackHTTPServer { _ in
            .respond(
                .init(
                    headers: [("Content-Type", "application/json")],
                    body: Array(#"{"mock_tile_1":[\#(tileJSON("t"))]}"#.utf8),
                    delay: .milliseconds(300)))
        }
        let curl = CurlHTTPClient()
        let client = MozAdsClientBuilder(httpClient: curl).environment(.custom(baseURL: server.baseURL + "/v1/"))
            .cacheConfig(MozAdsCacheConfig(dbPath: tempDB())).build()
        async let first = client.requestTileAds(tile1)
        async let second = client.requestTileAds(tile1)
        let (a, b) = try await (first, second)
        #expect(a["mock_tile_1"]?.blockKey == "bk_t" && b["mock_tile_1"]?.blockKey == "bk_t")
        #expect(server.requestsReceived == 1)
        await curl.shutdown()
        server.stop()
    }

    @Test func withoutTheCacheIdenticalRequestsAreSentEach() async throws {
        let (client, server, curl, _) = try craftedClient(body: #"{"mock_tile_1":[\#(tileJSON("t"))]}"#)
        async let first = client.requestTileAds(tile1)
        async let second = client.requestTileAds(tile1)
        _ = try await (first, second)
        #expect(server.requestsReceived == 2)
        await curl.shutdown()
        server.stop()
    }
}

import AdMediation
import AdMediationTesting
import AdNetworkConformance
import AdapterKit
import CurlTransport
import DemandSandbox
import Foundation
import Synchronization
import TestSupport
import Testing

@testable import MARSAds

func marsError(_ operation: () async throws -> Void) async -> AdError? {
    do {
        try await operation()
        return nil
    } catch { return error as? AdError }
}

@Suite("MARS client over the sandbox", .timeLimit(.minutes(2)))
struct MarsClientTests {
    @Test func tileSpocAndImageRequestsFill() async throws {
        let f = try await marsFixture()
        let tiles = try await f.client.requestTileAds(tile1)
        let spocs = try await f.client.requestSpocAds([
            MozAdsPlacementRequestWithCount(count: 3, placementId: "mock_spoc_1")
        ])
        let images = try await f.client.requestImageAds(
            [
                MozAdsPlacementRequest(
                    placementId: "mock_billboard_1", iabContent: .init(taxonomy: .iab3_0, categoryIds: ["338"]))
            ],
            options: .init(flags: ["contextual_placement": true]))
        #expect(tiles["mock_tile_1"]?.name.isEmpty == false)
        #expect(spocs["mock_spoc_1"]?.count == 3)
        #expect(spocs["mock_spoc_1"]?.map(\.ranking.priority) == [1, 2, 3], "server order kept")
        let image = try #require(images["mock_billboard_1"])
        #expect(image.format == "billboard" && image.altText != nil && !image.url.isEmpty && !image.imageUrl.isEmpty)
        await f.close()
    }

    @Test func requestIsAPostWithTheJSONContentType() async throws {
        let seen = RequestLog()
        let (client, server, curl, _) = try craftedClient(body: "{}", record: seen)
        _ = try await client.requestTileAds(tile1)
        let request = try #require(seen.requests.first)
        #expect(request.method == "POST" && request.path == "/v1/ads")
        #expect(request.header("Content-Type") == "application/json")
        await curl.shutdown()
        server.stop()
    }

    @Test func customContextIDProviderValueIsSent() async throws {
        let f = try await marsFixture(contextID: FixedContextIDProvider("my-context"))
        _ = try await f.client.requestTileAds(tile1)
        #expect(f.sandbox.marsRecords.requests.first?.contains(#""context_id":"my-context""#) == true)
        await f.close()
    }

    @Test func defaultContextIDIsANonEmptyUUID() async throws {
        let f = try await marsFixture()
        _ = try await f.client.requestTileAds(tile1)
        let body = try #require(f.sandbox.marsRecords.requests.first)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])
        #expect(UUID(uuidString: object["context_id"] as? String ?? "") != nil)
        await f.close()
    }

    @Test func contextIDRotatesAfterThreeDaysAndDeletesTheOldOne() async throws {
        let f = try await marsFixture(cache: nil)
        _ = try await f.client.requestTileAds(tile1)
        f.wall.advance(3 * 24 * 3600 - 1)
        _ = try await f.client.requestTileAds(tile1)
        #expect(f.sandbox.marsRecords.deletedContextIDs.isEmpty, "no rotation before 3 days")
        f.wall.advance(1)
        _ = try await f.client.requestTileAds(tile1)
        let ids = f.sandbox.marsRecords.requests.compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])?["context_id"] as? String
        }
        #expect(ids[0] == ids[1] && ids[1] != ids[2])
        // The DELETE is the client's background work: its shutdown returns once it has gone out (nothing is left
        // fire-and-forget, so no wait is needed here).
        await f.client.shutdown()
        #expect(f.client.pendingContextDeletes == 0)
        #expect(f.sandbox.marsRecords.deletedContextIDs == [ids[0]])
        await f.close()
    }

    @Test func duplicatePlacementIsRejectedBeforeAnyRequest() async throws {
        let f = try await marsFixture()
        let error = await marsError { _ = try await f.client.requestTileAds(tile1 + tile1) }
        #expect(error?.reason == .marsBuildRequest)
        #expect(error?.message == "Duplicate placement_id found: mock_tile_1. Placement_ids must be unique.")
        #expect(f.sandbox.records.count("/mars/") == 0)
        await f.close()
    }

    @Test func emptyPlacementListIsRejected() async throws {
        let f = try await marsFixture()
        let error = await marsError { _ = try await f.client.requestTileAds([]) }
        #expect(error?.message == "Could not build request with empty placement configs")
        await f.close()
    }

    @Test func ohttpFailsClearlyAndSendsNothing() async throws {
        let f = try await marsFixture()
        let error = await marsError { _ = try await f.client.requestTileAds(tile1, options: .init(ohttp: true)) }
        #expect(error?.reason == .marsOHTTPNotConfigured)
        let callback = await marsError {
            try await f.client.recordClick("https://t.example/c", options: .init(ohttp: true))
        }
        #expect(callback?.reason == .marsOHTTPNotConfigured)
        #expect(f.sandbox.records.count("/mars/") == 0)
        await f.close()
    }

    @Test func emptyPlacementsAreLeftOut() async throws {
        let f = try await marsFixture(SandboxScenario(networks: ["mars": NetworkScenario(fillRate: 0)]))
        #expect(try await f.client.requestTileAds(tile1).isEmpty)
        await f.close()
    }

    @Test func invalidItemsAreDroppedOneByOne() async throws {
        let bad =
            (#"{"format":"tile","url":"u","image_url":"i","block_key":"b","name":"n","#
                + #""callbacks":{"click":"not a url","impression":"https://t/i"}}"#)
        let body = #"{"p1":[\#(bad),\#(tileJSON("ok"))],"p2":[\#(bad)],"p3":"not a list"}"#
        let (client, server, curl, telemetry) = try craftedClient(body: body)
        let tiles = try await client.requestTileAds([
            .init(placementId: "p1"), .init(placementId: "p2"), .init(placementId: "p3"),
        ])
        #expect(Array(tiles.keys) == ["p1"])
        #expect(tiles["p1"]?.blockKey == "bk_ok")
        #expect(telemetry.log.filter { $0 == "deser:invalid_ad_item" }.count == 2)
        await curl.shutdown()
        server.stop()
    }

    @Test func tilesKeepTheFirstAdOnly() async throws {
        let (client, server, curl, _) = try craftedClient(
            body: #"{"p":[\#(tileJSON("first")),\#(tileJSON("second"))]}"#)
        #expect(try await client.requestTileAds([.init(placementId: "p")])["p"]?.blockKey == "bk_first")
        await curl.shutdown()
        server.stop()
    }

    @Test func nullReportDecodesToNilAndStillGetsTheRequestHash() async throws {
        let (client, server, curl, _) = try craftedClient(body: #"{"p":[\#(tileJSON("x", report: nil))]}"#)
        let tile = try #require(try await client.requestTileAds([.init(placementId: "p")])["p"])
        #expect(tile.callbacks.report == nil)
        #expect(tile.callbacks.click.contains("&request_hash="))
        await curl.shutdown()
        server.stop()
    }

    @Test func callbacksAreEnrichedWithHashCapKeyPlacementAndPosition() async throws {
        let f = try await marsFixture()
        let spocs = try #require(
            try await f.client.requestSpocAds([.init(count: 2, placementId: "mock_spoc_1")])["mock_spoc_1"])
        let hash = MozAdsClient.requestHash(
            environment: .custom(baseURL: f.sandbox.marsBaseURL), placements: [Spec(id: "mock_spoc_1", count: 2)],
            flags: [:], ohttp: false)
        #expect(spocs[0].callbacks.click.hasSuffix("&request_hash=\(hash)"))
        #expect(spocs[0].callbacks.impression.hasSuffix("&request_hash=\(hash)&cap_key=\(spocs[0].caps.capKey)"))
        #expect(spocs[0].callbacks.report?.hasSuffix("&placement_id=mock_spoc_1&position=0") == true)
        #expect(spocs[1].callbacks.report?.hasSuffix("&placement_id=mock_spoc_1&position=1") == true)
        await f.close()
    }

    @Test func callbacksAreGETsAndImpressionDropsCapKey() async throws {
        let f = try await marsFixture()
        let spoc = try #require(
            try await f.client.requestSpocAds([.init(count: 1, placementId: "mock_spoc_1")])["mock_spoc_1"]?.first)
        try await f.client.recordImpression(spoc.callbacks.impression)
        try await f.client.recordClick(spoc.callbacks.click)
        try await f.client.reportAd(spoc.callbacks.report!, reason: .notInterested)
        let calls = f.sandbox.marsRecords.callbacks
        #expect(calls.count == 3)
        #expect(calls[0].query["cap_key"] == nil && calls[0].query["request_hash"] != nil)
        #expect(calls[1].query["request_hash"] != nil)
        #expect(calls[2].query["reason"] == "not_interested" && calls[2].query["position"] == "0")
        #expect(f.sandbox.records.requestCounts["GET /mars/v1/t"] == 3)
        await f.close()
    }

    @Test func reportReasonsHaveTheirWireValues() {
        #expect(
            MozAdsReportReason.allCases.map(\.rawValue) == ["inappropriate", "not_interested", "seen_too_many_times"])
    }

    @Test func invalidCallbackURLFailsBeforeAnyRequest() async throws {
        let f = try await marsFixture()
        let error = await marsError { try await f.client.recordClick("not a url") }
        #expect(error?.reason == .marsInvalidCallbackURL)
        #expect(!f.telemetry.log.contains("error:record_click"), "caught at the API edge, not reported")
        await f.close()
    }

    @Test(arguments: [
        (400, "badRequest"), (500, "server"), (503, "server"), (404, "unexpected"), (429, "unexpected"),
        (204, "unexpected"),
    ])
    func statusCodesMapToErrorsWithTheBodyAsMessage(status: Int, kind: String) async throws {
        let (client, server, curl, _) = try craftedClient(status: status, body: "nope \(status)")
        let error = await marsError { _ = try await client.requestTileAds(tile1) }
        switch error?.reason {
        case .marsBadRequest?: #expect(kind == "badRequest" && error?.code == .badRequest)
        case .marsServer?: #expect(kind == "server" && error?.code == .server(status: status))
        case .marsUnexpectedStatus?:
            #expect(kind == "unexpected" && error?.code == AdError.http(status: status, message: "").code)
        default: Issue.record("unexpected \(String(describing: error))")
        }
        #expect(error?.message.contains("(\(status))") == true)
        if status != 204 { #expect(error?.message.hasSuffix(": nope \(status)") == true) }
        await curl.shutdown()
        server.stop()
    }

    @Test func callbackSucceedsOnlyOn200() async throws {
        let (client, server, curl, telemetry) = try craftedClient(status: 204, body: "")
        let error = await marsError { try await client.recordImpression(server.baseURL + "/v1/t?x=1") }
        #expect(error?.reason == .marsUnexpectedStatus && error?.message.hasPrefix("Unexpected response (204)") == true)
        #expect(telemetry.log.contains("error:record_impression"))
        await curl.shutdown()
        server.stop()
    }

    @Test func operationsAreCountedInTelemetry() async throws {
        let f = try await marsFixture()
        let tile = try #require(try await f.client.requestTileAds(tile1)["mock_tile_1"])
        try await f.client.recordClick(tile.callbacks.click)
        #expect(f.telemetry.log.filter { $0.hasPrefix("op:") } == ["op:new", "op:request_ads", "op:record_click"])
        await f.close()
    }

    @Test func shutdownIsIdempotentAndDropsTelemetry() async throws {
        let f = try await marsFixture()
        await f.client.shutdown()
        await f.client.shutdown()
        _ = try await f.client.requestTileAds(tile1)
        #expect(!f.telemetry.log.contains("op:request_ads"))
        await f.close()
    }
}

@Suite("MARS as an AdNetwork", .timeLimit(.minutes(2)))
struct MarsNetworkTests {
    @Test func tilesSpocsAndImagesLoadAsFormats() async throws {
        let f = try await marsFixture()
        let network = MarsNetwork(client: f.client)
        for (placement, format) in [
            ("mock_tile_1", AdFormat.tile), ("mock_spoc_1", .spoc), ("mock_billboard_1", .image),
        ] {
            let ad = try #require(try await network.load(AdRequest(placement: placement, format: format)).ad)
            #expect(ad.format == format && ad.networkID == "mars")
        }
        await f.close()
    }

    @Test func eventsFireTheCallbacks() async throws {
        let f = try await marsFixture()
        let network = MarsNetwork(client: f.client)
        let ad = try #require(try await network.load(AdRequest(placement: "mock_spoc_1", format: .spoc)).ad)
        try await ad.report(.impression)
        try await ad.report(.click)
        try await ad.report(.reported(reason: "inappropriate"))
        // The callbacks are sent in the background: read the wire once they were (a hang guard), not at the end of
        // shutdown's 2 s grace (real clock), which a busy machine can exceed.
        #expect(await HangGuard.until { network.pendingCallbacks == 0 })
        await network.shutdown()
        #expect(
            f.sandbox.marsRecords.callbacks.map { $0.query["data"]?.split(separator: "-").first.map(String.init) } == [
                "impression", "click", "report",
            ])
        await f.close()
    }

    @Test func badRequestMapsToTheTaxonomy() async throws {
        let f = try await marsFixture()
        do {
            _ = try await MarsNetwork(client: f.client).load(AdRequest(placement: "unknown_1", format: .tile))
            Issue.record("expected an error")
        } catch let error as AdError {
            #expect(error.code == .badRequest)
        }
        await f.close()
    }

    @Test func gppReachesTheWireAsConsent() async throws {
        let f = try await marsFixture()
        var request = AdRequest(placement: "mock_tile_1", format: .tile)
        request.privacy.gpp = "DBABMA"
        _ = try await MarsNetwork(client: f.client).load(request)
        #expect(f.sandbox.marsRecords.requests.first?.contains(#""consent":{"gpp":"DBABMA"}"#) == true)
        await f.close()
    }

    @Test func adapterPassesTheConformanceKit() async throws {
        let sandbox = try await DemandSandbox.start(
            scenario: SandboxScenario(placements: [
                "mars/mock_tile_2": NetworkScenario(fillRate: 0),
                "mars/mock_tile_3": NetworkScenario(latencyMs: .fixed(1500)),
            ]))
        let curl = CurlHTTPClient()
        let http = RecordingHTTPClient(wrapping: curl)
        // No cache: the kit's repeated identical requests must reach the wire.
        let client = MozAdsClientBuilder(httpClient: http).environment(.custom(baseURL: sandbox.marsBaseURL)).build()
        let subject = ConformanceSubject(
            network: MarsNetwork(client: client), wire: http,
            fillRequest: AdRequest(placement: "mock_tile_1", format: .tile),
            noFillRequest: AdRequest(placement: "mock_tile_2", format: .tile),
            failingRequest: (AdRequest(placement: "not_a_placement", format: .tile), .badRequest),
            slowRequest: AdRequest(placement: "mock_tile_3", format: .tile),
            privacyFields: [.gpp])
        for result in await AdNetworkConformance.runAll(subject) where result.status != .passed {
            Issue.record("\(result.scenario): \(result.status)")
        }
        await curl.shutdown()
        await sandbox.shutdown()
    }
}

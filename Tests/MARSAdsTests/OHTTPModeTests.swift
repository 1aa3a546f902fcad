import AdMediation
import AdMediationTesting
import AdTransport
import CurlTransport
import DemandSandbox
import Foundation
import ObliviousHTTP
import Testing

@testable import MARSAds

/// MARS through the sandbox's Oblivious HTTP relay and gateway (RFC 9458).
@Suite("MARS over Oblivious HTTP", .timeLimit(.minutes(1)))
struct OHTTPModeTests {
    static func client(
        _ sandbox: RunningSandbox, _ curl: CurlHTTPClient, relay: String? = nil, keys: String? = nil,
        cache: MozAdsCacheConfig? = nil
    ) -> MozAdsClient {
        var builder = MozAdsClientBuilder(httpClient: curl).environment(.custom(baseURL: sandbox.marsBaseURL))
            .ohttp(
                relayURL: relay ?? sandbox.rootURL + "/ohttp/relay",
                keyConfigurationURL: keys ?? sandbox.rootURL + "/ohttp/keys")
        if let cache { builder = builder.cacheConfig(cache) }
        return builder.build()
    }

    static let ohttp = MozAdsRequestOptions(ohttp: true)

    @Test func tileFillsThroughTheRelayWhichSeesOnlyCiphertext() async throws {
        try await DemandSandbox.withSandbox { sandbox in
            try await withCurlHTTPClient { curl in
                let tiles = try await Self.client(sandbox, curl).requestTileAds(tile1, options: Self.ohttp)
                #expect(tiles["mock_tile_1"] != nil)
                let records = sandbox.records
                #expect(records.ohttpRelayed.count == 1)
                #expect(records.ohttpRelayed.first?.contentType == "message/ohttp-req")
                let relayed = try #require(records.ohttpRelayed.first?.body)
                for plaintext in ["mock_tile_1", "context_id", "/mars/v1/ads", "placements"] {
                    #expect(relayed.range(of: Data(plaintext.utf8)) == nil, "the relay saw \(plaintext)")
                }
                #expect(records.ohttpGatewayRequests.map { "\($0.method) \($0.path)" } == ["POST /mars/v1/ads"])
                #expect(
                    sandbox.marsRecords.requests.count == 1 && sandbox.marsRecords.requests[0].contains("mock_tile_1"),
                    "the gateway decrypted the request")
                #expect(records.count("GET /mars/v1/ads-preflight") == 1, "the preflight goes directly")
            }
        }
    }

    @Test func preflightGeoAndUserAgentTravelInsideTheEncapsulatedRequest() async throws {
        try await DemandSandbox.withSandbox { sandbox in
            try await withCurlHTTPClient { curl in
                _ = try await Self.client(sandbox, curl).requestTileAds(tile1, options: Self.ohttp)
                let headers = try #require(sandbox.records.ohttpGatewayRequests.first?.headers)
                #expect(headers["x-geo-location"] == "506,MA,US")
                #expect(headers["x-user-agent"] == "Other")
                #expect(headers["content-type"] == "application/json")
            }
        }
    }

    @Test func impressionCallbackGoesThroughTheRelay() async throws {
        try await DemandSandbox.withSandbox { sandbox in
            try await withCurlHTTPClient { curl in
                let client = Self.client(sandbox, curl)
                let tile = try #require(try await client.requestTileAds(tile1, options: Self.ohttp)["mock_tile_1"])
                try await client.recordImpression(
                    tile.callbacks.impression, options: MozAdsCallbackOptions(ohttp: true))
                let records = sandbox.records
                #expect(records.ohttpRelayed.count == 2)
                #expect(records.ohttpGatewayRequests.map(\.path) == ["/mars/v1/ads", "/mars/v1/t"])
                #expect(sandbox.marsRecords.callbacks.count == 1)
            }
        }
    }

    @Test func aRotatedKeyIsRefetchedOnceAndTheRequestRetried() async throws {
        try await DemandSandbox.withSandbox { sandbox in
            try await withCurlHTTPClient { curl in
                let client = Self.client(sandbox, curl)
                _ = try await client.requestTileAds(
                    tile1, options: MozAdsRequestOptions(cachePolicy: .init(mode: .networkFirst), ohttp: true))
                let rotated = try await curl.send(HTTPRequest(method: .post, url: sandbox.adminURL + "/ohttp/rotate"))
                #expect(rotated.status == 200)
                let tiles = try await client.requestTileAds(
                    tile1, options: MozAdsRequestOptions(cachePolicy: .init(mode: .networkFirst), ohttp: true))
                #expect(tiles["mock_tile_1"] != nil)
                let records = sandbox.records
                #expect(records.count("GET /ohttp/keys") == 2, "fetched once, then once more after the rotation")
                #expect(
                    records.ohttpRelayed.map(\.status) == [200, 422, 200],
                    "the old key's request got the ohttp-key problem")
            }
        }
    }

    @Test func relayDownFailsWithTheTransportErrorAndNothingGoesDirect() async throws {
        try await DemandSandbox.withSandbox { sandbox in
            try await withCurlHTTPClient { curl in
                let port = try LoopbackHTTPServer.refusingPort()
                let client = Self.client(sandbox, curl, relay: "http://127.0.0.1:\(port)/relay")
                let error = await marsError { _ = try await client.requestTileAds(tile1, options: Self.ohttp) }
                #expect(error?.reason == .marsTransport(.connectionRefused))
                #expect(sandbox.marsRecords.requests.isEmpty, "no silent fallback to a direct request")
            }
        }
    }

    @Test func relayRefusalIsAnOHTTPRelayError() async throws {
        let relay = try LoopbackHTTPServer { _ in
            .respond(.init(status: 502, headers: [("Content-Type", "text/plain")], body: Array("bad gateway".utf8)))
        }
        defer { relay.stop() }
        try await DemandSandbox.withSandbox { sandbox in
            try await withCurlHTTPClient { curl in
                let client = Self.client(sandbox, curl, relay: relay.baseURL + "/relay")
                let error = await marsError { _ = try await client.requestTileAds(tile1, options: Self.ohttp) }
                #expect(error?.reason == .marsTransport(.ohttpRelay))
                #expect(error?.message.contains("502") == true)
                #expect(error.map { MarsNetwork.adError($0).code } == .network)
                #expect(sandbox.marsRecords.requests.isEmpty)
            }
        }
    }

    @Test func malformedKeyConfigurationIsAConfigurationError() async throws {
        try await DemandSandbox.withSandbox { sandbox in
            try await withCurlHTTPClient { curl in
                let client = Self.client(sandbox, curl, keys: sandbox.marsBaseURL + "t")  // 200, empty body
                let error = await marsError { _ = try await client.requestTileAds(tile1, options: Self.ohttp) }
                #expect(error?.reason == .marsTransport(.ohttpKeyConfiguration))
                #expect(error.map { MarsNetwork.adError($0).code } == .configuration)
                #expect(sandbox.records.ohttpRelayed.isEmpty && sandbox.marsRecords.requests.isEmpty)
            }
        }
    }

    @Test func responseThatDoesNotDecryptIsAnInvalidResponse() async throws {
        let relay = try LoopbackHTTPServer { _ in
            .respond(
                .init(
                    status: 200, headers: [("Content-Type", "message/ohttp-res")],
                    body: [UInt8](repeating: 7, count: 64)))
        }
        defer { relay.stop() }
        try await DemandSandbox.withSandbox { sandbox in
            try await withCurlHTTPClient { curl in
                let client = Self.client(sandbox, curl, relay: relay.baseURL + "/relay")
                let error = await marsError { _ = try await client.requestTileAds(tile1, options: Self.ohttp) }
                #expect(error?.reason == .marsTransport(.ohttpDecryption))
                #expect(error.map { MarsNetwork.adError($0).code } == .invalidResponse)
            }
        }
    }

    @Test("the OHTTP preflight and the ads request share the load's timeout")
    func thePreflightSpendsTheLoadsTimeout() async throws {
        // 8 s: far above what a loopback preflight needs, and under the preflight's own 10 s ceiling.
        let timeout = Duration.seconds(8)
        try await DemandSandbox.withSandbox { sandbox in
            try await withCurlHTTPClient { curl in
                let recording = TimeoutRecordingClient(base: curl)
                let client = MozAdsClientBuilder(httpClient: recording)
                    .environment(.custom(baseURL: sandbox.marsBaseURL))
                    .ohttp(
                        relayURL: sandbox.rootURL + "/ohttp/relay", keyConfigurationURL: sandbox.rootURL + "/ohttp/keys"
                    )
                    .build()
                _ = try await client.fetch(
                    tile1.map { MozAdsClient.PlacementSpec(id: $0.placementId, count: 1, content: nil) }, kind: .tile,
                    options: Self.ohttp, timeout: timeout, gpp: nil)
                let sent = recording.sent
                let preflight = sent.first { $0.url.contains("ads-preflight") }
                #expect(preflight != nil, "\(sent)")
                #expect(preflight.flatMap(\.timeout).map { $0 <= timeout } == true, "\(sent)")
                let relayed = sent.filter { $0.url.contains("/ohttp/relay") }
                #expect(!relayed.isEmpty && relayed.allSatisfy { ($0.timeout ?? .seconds(60)) <= timeout }, "\(sent)")
            }
        }
    }

    @Test func cacheKeepsOHTTPAndDirectAnswersApart() async throws {
        try await DemandSandbox.withSandbox { sandbox in
            try await withCurlHTTPClient { curl in
                let client = Self.client(sandbox, curl, cache: MozAdsCacheConfig(dbPath: tempDB()))
                _ = try await client.requestTileAds(tile1)
                _ = try await client.requestTileAds(tile1, options: Self.ohttp)
                _ = try await client.requestTileAds(tile1, options: Self.ohttp)
                #expect(sandbox.marsRecords.requests.count == 2, "one direct, one over OHTTP, then a cache hit")
                #expect(sandbox.records.ohttpRelayed.count == 1)
            }
        }
    }

    @Test func withoutARelayOHTTPStillFailsClearlyAndSendsNothing() async throws {
        try await DemandSandbox.withSandbox { sandbox in
            try await withCurlHTTPClient { curl in
                let client = MozAdsClientBuilder(httpClient: curl).environment(.custom(baseURL: sandbox.marsBaseURL))
                    .build()
                let error = await marsError { _ = try await client.requestTileAds(tile1, options: Self.ohttp) }
                #expect(error?.reason == .marsOHTTPNotConfigured)
                #expect(sandbox.records.count("/mars/") == 0)
            }
        }
    }

    @Test func thePreflightIsCachedByItsURL() async throws {
        try await DemandSandbox.withSandbox { sandbox in
            try await withCurlHTTPClient { curl in
                let client = Self.client(sandbox, curl, cache: MozAdsCacheConfig(dbPath: tempDB()))
                let networkFirst = MozAdsRequestOptions(cachePolicy: .init(mode: .networkFirst), ohttp: true)
                _ = try await client.requestTileAds(tile1, options: networkFirst)
                _ = try await client.requestTileAds(tile1, options: networkFirst)
                #expect(sandbox.records.ohttpRelayed.count == 2, "both ad requests went through the relay")
                #expect(
                    sandbox.records.count("GET /mars/v1/ads-preflight") == 1, "the second preflight came from the cache"
                )
            }
        }
    }

    @Test func theGatewayAnswersARequestWhosePathEndsInAnEmptyQuery() async throws {
        try await DemandSandbox.withSandbox { sandbox in
            try await withCurlHTTPClient { curl in
                let relay = ObliviousHTTPRelayClient(
                    relayURL: sandbox.rootURL + "/ohttp/relay", keyConfigurationURL: sandbox.rootURL + "/ohttp/keys",
                    transport: curl)
                let response = try await relay.send(HTTPRequest(url: sandbox.marsBaseURL + "t?"))
                #expect(response.status == 200)
                #expect(sandbox.records.ohttpGatewayRequests.map(\.path) == ["/mars/v1/t"])
            }
        }
    }
}

/// Passes every request on and records its URL and timeout.
private final class TimeoutRecordingClient: HTTPClient {
    private let base: any HTTPClient
    private let requests = LockedValue<[(url: String, timeout: Duration?)]>([])

    init(base: any HTTPClient) { self.base = base }

    var sent: [(url: String, timeout: Duration?)] { requests.withLock { $0 } }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        requests.withLock { $0.append((request.url, request.timeout)) }
        return try await base.send(request)
    }
}

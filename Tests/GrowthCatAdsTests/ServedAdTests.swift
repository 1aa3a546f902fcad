import AdMediation
import AdMediationTesting
import CurlTransport
import Foundation
import Synchronization
import Testing

@testable import GrowthCatAds

/// What the server saw: serves so far and the tokens reward validations carried.
final class ServeLog: Sendable {
    private let state = Mutex<(serves: Int, tokens: [String])>((0, []))
    func nextServe() -> Int {
        state.withLock {
            $0.serves += 1
            return $0.serves
        }
    }
    func rewarded(_ token: String) { state.withLock { $0.tokens.append(token) } }
    var rewardTokens: [String] { state.withLock { $0.tokens } }
}

/// A GrowthCat server that serves one creative, each time with a new allocation and token.
final class ReServingServer: Sendable {
    let server: LoopbackHTTPServer
    let log = ServeLog()

    init() throws {
        let log = log
        server = try LoopbackHTTPServer { request in
            if request.path.hasSuffix("/sdk/config") {
                return .respond(
                    .init(
                        body: Array(
                            #"{"app_id":"a","workspace":"w","ads":{"ads_enabled":true,"formats":["interstitial"]}}"#
                                .utf8)))
            }
            if request.path.hasSuffix("/reward/validate") {
                let body = (try? JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any]) ?? [:]
                log.rewarded(body["token"] as? String ?? "")
                return .respond(
                    .init(
                        body: Array(
                            #"{"reward_validated":true,"accepted":1,"reward":{"name":"Coins","amount":5}}"#.utf8)))
            }
            let n = log.nextServe()
            let ad =
                (#"{"placement":{"key":"p","format":"interstitial","reward_enabled":true,"minimum_view_seconds":1},"#
                    + (#""campaign":{"id":"c"},"creative":{"id":"same_creative","creative_type":"image","#
                        + (#""public_asset_url":"https://x/a.png"},"#
                            + #""tracking":{"allocation_id":"alloc_\#(n)","token":"tok_\#(n)"}}"#)))
            return .respond(.init(body: Array(#"{"cache_ttl_seconds":0,"ads":[\#(ad)]}"#.utf8)))
        }
    }
}

@Suite("GrowthCat: tracking data belongs to the served ad", .timeLimit(.minutes(1)))
struct ServedAdTests {
    /// A GrowthCat network over `s`, without the catalog cache (each load is a new serve).
    func uncachedNetwork(_ s: ReServingServer) throws -> (GrowthCatNetwork, CurlHTTPClient) {
        let curl = CurlHTTPClient()
        var configuration = GrowthCatClient.Configuration(
            apiKey: "k", baseURL: s.server.baseURL, eventQueuePath: queuePath())
        configuration.catalogCaching = false
        return (GrowthCatNetwork(client: try GrowthCatClient(configuration: configuration, http: curl)), curl)
    }

    @Test func twoServesOfOneCreativeKeepTheirOwnAllocationAndToken() async throws {
        let s = try ReServingServer()
        let (network, curl) = try uncachedNetwork(s)
        let first = try #require(try await network.load(AdRequest(placement: "p", format: .rewarded)).ad)
        let second = try #require(try await network.load(AdRequest(placement: "p", format: .rewarded)).ad)
        #expect(first.creative.id == second.creative.id)
        let firstAd = try #require(network.growthCatAd(for: first))
        #expect(
            firstAd.allocationID == "alloc_1" && firstAd.token == "tok_1",
            "the second serve did not overwrite the first")
        #expect(network.growthCatAd(for: second)?.token == "tok_2")
        _ = try await network.client.validateAdReward(
            for: firstAd, appUserID: "u", sessionID: nil, viewedSeconds: 2, completed: true)
        #expect(s.log.rewardTokens == ["tok_1"], "the reward of the first ad is validated with its own token")
        await curl.shutdown()
        s.server.stop()
    }

    @Test func theAdapterDataSurvivesTheMediator() async throws {
        let s = try ReServingServer()
        let (network, curl) = try uncachedNetwork(s)
        let mediator = try Mediator(
            networks: [network],
            configuration: MediationConfiguration(placements: [
                // Generous times: the test is about the data the ad carries, not speed on a busy machine.
                "r": PlacementConfiguration(
                    format: .rewarded,
                    lines: [WaterfallLine(network: "growthcat", placement: "p", timeout: .milliseconds(10_000))],
                    deadline: .milliseconds(20_000))
            ]))
        let ad = try #require(try await mediator.load(AdRequest(placement: "r", format: .rewarded)).ad)
        #expect(network.growthCatAd(for: ad)?.token == "tok_1")
        await curl.shutdown()
        s.server.stop()
    }
}

import AdMediation
import AdMediationTesting
import CurlTransport
import Foundation
import Testing

@testable import GrowthCatAds

/// What the server saw: serves so far and the tokens reward validations carried.
final class ServeLog: Sendable {
    private let state = LockedValue<(serves: Int, tokens: [String])>((0, []))
    func nextServe() -> Int {
        state.withLock {
            $0.serves += 1
            return $0.serves
        }
    }
    func rewarded(_ token: String) { state.withLock { $0.tokens.append(token) } }
    var serves: Int { state.withLock { $0.serves } }
    var rewardTokens: [String] { state.withLock { $0.tokens } }
}

/// A GrowthCat server that serves one creative, each time with a new allocation and token, in catalogs to be cached
/// `cacheTTL` seconds.
final class ReServingServer: Sendable {
    let server: LoopbackHTTPServer
    let log = ServeLog()

    init(cacheTTL: Int = 0) throws {
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
            return .respond(.init(body: Array(#"{"cache_ttl_seconds":\#(cacheTTL),"ads":[\#(ad)]}"#.utf8)))
        }
    }
}

@Suite("GrowthCat: tracking data belongs to the served ad", .timeLimit(.minutes(1)))
struct ServedAdTests {
    /// A GrowthCat network over `s` with the default configuration (the catalog cache on), as an app has it.
    func defaultNetwork(_ s: ReServingServer) throws -> (GrowthCatNetwork, CurlHTTPClient) {
        let curl = CurlHTTPClient()
        let configuration = GrowthCatClient.Configuration(
            apiKey: "k", baseURL: s.server.baseURL, eventQueuePath: queuePath())
        return (GrowthCatNetwork(client: try GrowthCatClient(configuration: configuration, http: curl)), curl)
    }

    /// A rewarded ad's token is one-time: a second load within the catalog's TTL is a new serve (one token, one fill,
    /// issue 43), and so is a load after the first validation. Each served ad keeps its own allocation and token,
    /// whatever was served after it.
    @Test func twoServesOfOneCreativeKeepTheirOwnAllocationAndToken() async throws {
        let s = try ReServingServer(cacheTTL: 300)
        let (network, curl) = try defaultNetwork(s)
        let first = try #require(try await network.load(AdRequest(placement: "p", format: .rewarded)).ad)
        let again = try #require(try await network.load(AdRequest(placement: "p", format: .rewarded)).ad)
        #expect(s.log.serves == 2, "the cached catalog's token was handed out: a new serve")
        #expect(network.growthCatAd(for: again)?.token == "tok_2")
        let firstAd = try #require(network.growthCatAd(for: first))
        _ = try await network.client.validateAdReward(
            for: firstAd, appUserID: "u", sessionID: nil, viewedSeconds: 2, completed: true)
        let second = try #require(try await network.load(AdRequest(placement: "p", format: .rewarded)).ad)
        #expect(s.log.serves == 3, "a spent or handed-out token is never served again: a new serve")
        #expect(first.creative.id == second.creative.id)
        #expect(
            network.growthCatAd(for: first)?.allocationID == "alloc_1"
                && network.growthCatAd(for: first)?.token == "tok_1",
            "the later serves did not overwrite the first")
        let secondAd = try #require(network.growthCatAd(for: second))
        #expect(secondAd.allocationID == "alloc_3" && secondAd.token == "tok_3")
        _ = try await network.client.validateAdReward(
            for: secondAd, appUserID: "u", sessionID: nil, viewedSeconds: 2, completed: true)
        #expect(s.log.rewardTokens == ["tok_1", "tok_3"], "each reward is validated with its own serve's token")
        await curl.shutdown()
        s.server.stop()
    }

    @Test func theAdapterDataSurvivesTheMediator() async throws {
        let s = try ReServingServer(cacheTTL: 300)
        let (network, curl) = try defaultNetwork(s)
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

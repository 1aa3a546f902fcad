import AdMediation
import AdMediationTesting
import CurlTransport
import Foundation
import Testing

@testable import GrowthCatAds

@Suite("GrowthCat pre-downloads are bounded", .timeLimit(.minutes(1)))
struct PrefetchBoundTests {
    /// What one task of the test gave: a load's ad, or the wait's deadline passing first.
    enum Outcome: Sendable {
        case loaded(GrowthCatAd?)
        case deadline
    }

    /// Seed: `asset_cache.strategy: prefetch` means the SDK downloads the asset "before rendering when possible": an
    /// optimisation, which must never hold a load behind other loads' downloads (under 256 concurrent loads each one
    /// waited behind the others' file writes and every rewarded load of `mediate compare` missed its deadline). Here
    /// no creative download ever ends (the asset server never answers) and the request timeout (50 s) outlasts the
    /// wait (20 s), so only a load that did not start a download can answer.
    @Test("loads past the pre-download bound answer at once without a local copy while the bound's downloads wait")
    func loadsPastTheBoundAnswerAtOnce() async throws {
        let server = try AssetServer { .silent }
        let curl = CurlHTTPClient()
        var configuration = GrowthCatClient.Configuration(
            apiKey: "k", baseURL: server.server.baseURL, eventQueuePath: queuePath())
        configuration.requestTimeout = .seconds(50)
        let client = try GrowthCatClient(configuration: configuration, http: curl)
        let past = 3
        let answered: [GrowthCatAd?] = try await withThrowingTaskGroup(of: Outcome.self) { group in
            for _ in 0..<(GrowthCatClient.maxPrefetches + past) {
                group.addTask { .loaded(try await client.loadAd(placementKey: "p")) }
            }
            group.addTask {
                try await Task.sleep(for: .seconds(20))
                return .deadline
            }
            defer { group.cancelAll() }
            var ads: [GrowthCatAd?] = []
            while ads.count < past, let outcome = try await group.next() {
                guard case .loaded(let ad) = outcome else { break }
                ads.append(ad)
            }
            return ads
        }
        #expect(answered.count == past, "the loads past the bound answer; without the bound none does")
        for ad in answered {
            #expect(ad != nil, "the ad is served from its remote URL")
            #expect(ad?.localAssetFile == nil)
        }
        #expect(server.assetRequests <= GrowthCatClient.maxPrefetches)
        await client.shutdown()
        await curl.shutdown()
    }
}

import AdMediation
import AdMediationTesting
import AdNetworkConformance
import CurlTransport
import Foundation
import Testing

@testable import MARSAds

/// MARS's requests go through the request runner: what it adds to the client (nothing sent from a cancelled task),
/// in MARS's own words (the seed's `Request failed (…)` error with its `mars.transport_*` reason).
@Suite("MARS: requests through the request runner", .timeLimit(.minutes(1)))
struct MarsRequestRunnerUseTests {
    @Test("a cancelled ad request sends nothing and fails as cancelled, with MARS's transport reason")
    func aCancelledAdRequestSendsNothing() async throws {
        let server = try LoopbackHTTPServer { _ in .respond(.text("{}")) }
        defer { server.stop() }
        let curl = CurlHTTPClient()
        let wire = RecordingHTTPClient(wrapping: curl)
        let client = MozAdsClientBuilder(httpClient: wire).environment(.custom(baseURL: server.baseURL + "/v1/"))
            .build()
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await client.requestTileAds(tile1)
        }
        let result = await task.result
        await curl.shutdown()
        guard case .failure(let error) = result else {
            Issue.record("a cancelled request answered \(result)")
            return
        }
        let adError = try #require(error as? AdError, "\(error)")
        #expect(adError.code == .cancelled)
        #expect(adError.reason == .marsTransport(.cancelled))
        #expect(wire.requestCount == 0, "nothing reached the transport")
        #expect(server.requestsReceived == 0)
    }
}

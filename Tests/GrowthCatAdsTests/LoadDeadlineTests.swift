import AdMediation
import AdMediationTesting
import CurlTransport
import Foundation
import Testing

@testable import GrowthCatAds

/// A load's timeout is enforced by the transport (the deadline the request runner puts on each request), with no
/// timer racing the load: what is left of it bounds the bootstrap as well as the catalog.
@Suite("GrowthCat: the load's timeout through the request runner", .timeLimit(.minutes(1)))
struct LoadDeadlineTests {
    @Test("a bootstrap that outlasts the load's timeout makes the load a timeout, not a no fill")
    func aBootstrapOutlastingTheLoadsTimeoutIsATimeout() async throws {
        let server = try LoopbackHTTPServer { request in
            guard request.path.hasSuffix("/sdk/config") else { return .respond(.text("{}", status: 404)) }
            return .respond(.text(#"{"app_id":"a","workspace":"w","ads":{"ads_enabled":true}}"#, delay: .seconds(3)))
        }
        defer { server.stop() }
        let curl = CurlHTTPClient()
        let configuration = GrowthCatClient.Configuration(
            apiKey: "k", baseURL: server.baseURL, eventQueuePath: queuePath())
        let network = GrowthCatNetwork(client: try GrowthCatClient(configuration: configuration, http: curl))
        let result: Result<AdLoadResult, any Error>
        do {
            result = .success(
                try await network.load(
                    AdRequest(placement: "p", format: .interstitial, timeout: .milliseconds(300))))
        } catch {
            result = .failure(error)
        }
        await network.client.shutdown()
        await curl.shutdown()
        guard case .failure(let error) = result else {
            Issue.record("the load ended with \(result), not an error")
            return
        }
        // A load that waited for the 3 s answer would have read it and ended as a no fill: the timeout itself is the
        // proof (no wall-clock bound here: the plain suite runs on a loaded machine; TimingTests hold such bounds).
        #expect((error as? AdError)?.code == .timeout, "\(error)")
    }
}

import AdMediation
import AdMediationTesting
import AdTransport
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

    @Test("a catalog that fails for want of a network after the load's deadline makes the load a timeout")
    func aNetworkFailureAfterTheDeadlineIsATimeout() async throws {
        let error = try await Self.loadError(stalling: "/ads/catalog", HTTPClientError(.connectionReset, "reset"))
        #expect(error?.code == .timeout, "\(String(describing: error))")
    }

    @Test("a bootstrap that fails for want of a network after the load's deadline makes the load a timeout")
    func aBootstrapNetworkFailureAfterTheDeadlineIsATimeout() async throws {
        let error = try await Self.loadError(stalling: "/sdk/config", HTTPClientError(.connectionRefused, "refused"))
        #expect(error?.code == .timeout, "\(String(describing: error))")
    }

    /// Loads with a 200 ms timeout through a client whose request to `path` stalls the process past the deadline (the
    /// client's clock moves 1 s) and then fails with `failure`: the load's error, or nil when it ended with a result.
    static func loadError(stalling path: String, _ failure: HTTPClientError) async throws -> AdError? {
        let clock = ManualAdClock()
        let http = StallingHTTPClient(clock: clock, path: path, failure: failure)
        let configuration = GrowthCatClient.Configuration(
            apiKey: "k", baseURL: "http://127.0.0.1:9", eventQueuePath: queuePath())
        let client = try GrowthCatClient(configuration: configuration, http: http, clock: clock)
        let network = GrowthCatNetwork(client: client)
        var error: AdError?
        do {
            let result = try await network.load(
                AdRequest(placement: "p", format: .interstitial, timeout: .milliseconds(200)))
            result.ad?.invalidate()
        } catch let thrown as AdError {
            error = thrown
        }
        await network.client.shutdown()
        return error
    }
}

/// An HTTP client in the process: the SDK configuration answers at once, and the request to `path` moves the client's
/// clock 1 s (a process stalled past the load's deadline) before failing as the transport would.
private struct StallingHTTPClient: HTTPClient {
    let clock: ManualAdClock
    let path: String
    let failure: HTTPClientError

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        if request.url.contains(path) {
            await clock.advance(by: .seconds(1))
            throw failure
        }
        guard request.url.contains("/sdk/config") else { return HTTPResponse(status: 404) }
        return HTTPResponse(status: 200, body: Data(#"{"app_id":"a","workspace":"w","ads":{"ads_enabled":true}}"#.utf8))
    }
}

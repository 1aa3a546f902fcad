// The adapter of the "Writing an adapter" article (Sources/AdMediation/AdMediation.docc/WritingAnAdapter.md),
// compiled and run against the sandbox and the conformance kit, so the article's code stays true.
import AdMediation
import AdNetworkConformance
import AdTransport
import CurlTransport
import DemandSandbox
import Foundation
import Testing

struct TinyAppOpenNetwork: AdNetwork {
    let id = "tiny"
    let capabilities = AdNetworkCapabilities(formats: [.appOpen], reportsPrice: true)
    let baseURL: String
    let http: any HTTPClient
    let clock: any AdClock

    init(baseURL: String, http: any HTTPClient, clock: any AdClock = SystemAdClock()) {
        self.baseURL = baseURL
        self.http = http
        self.clock = clock
    }

    /// The answer's fields this adapter uses; all optional, checked below.
    struct Wire: Decodable {
        struct Creative: Decodable {
            var type: String?
            var url: String?
        }
        var ad_id: String?
        var creative: Creative?
        var ecpm: Double?
        var ttl_seconds: Double?
    }

    func load(_ request: AdRequest) async throws -> AdLoadResult {
        var query = URLComponents()
        query.queryItems = [
            URLQueryItem(name: "ad_unit_id", value: request.placement),
            URLQueryItem(name: "request_id", value: UUID().uuidString.lowercased()),
        ]
        if let tcf = request.privacy.tcfConsent {
            query.queryItems?.append(URLQueryItem(name: "gdpr_consent", value: tcf))
        }
        if let usp = request.privacy.usPrivacy {
            query.queryItems?.append(URLQueryItem(name: "us_privacy", value: usp))
        }
        if let gpp = request.privacy.gpp { query.queryItems?.append(URLQueryItem(name: "gpp", value: gpp)) }
        let url = HTTPRequest.url(baseURL, appending: "/appopen/v1/ad") + "?" + (query.percentEncodedQuery ?? "")
        let response: HTTPResponse
        do {
            // Every request carries the network's destination rule: the transport checks it at each redirect hop.
            let rule = DestinationPolicy.forNetwork(baseURL: baseURL)
            response = try await http.send(HTTPRequest(url: url, timeout: request.timeout).requiring(rule, as: .api))
        } catch let error as HTTPClientError {
            throw AdError(error)  // timeout, cancelled, network, …
        }
        switch response.status {
        case 200: break
        case 204: return .noFill(NoFill(reason: "204 no fill"))
        case 401: throw AdError(.unauthorized, "tiny: 401")
        case 429:
            let retryAfter = response.headers["Retry-After"].flatMap(Double.init).flatMap {
                OutsideValue.duration(seconds: $0)
            }
            throw AdError(.rateLimited(retryAfter: retryAfter), "tiny: rate limited")
        case 500...599: throw AdError(.server(status: response.status), "tiny: \(response.status)")
        default: throw AdError(.invalidResponse, "tiny: unexpected status \(response.status)")
        }
        guard let wire = try? JSONDecoder().decode(Wire.self, from: response.body), let adID = wire.ad_id, !adID.isEmpty
        else {
            throw AdError(.invalidResponse, "tiny: the answer has no ad_id")
        }
        let now = clock.now
        let fourHours = Duration.seconds(14_400)
        let ttl =
            wire.ttl_seconds.flatMap { OutsideValue.duration(seconds: $0) }.map { min($0, fourHours) } ?? fourHours
        return .filled(
            LoadedAd(
                networkID: id, placement: request.placement, format: request.format,
                creative: AdCreative(id: adID, kind: wire.creative?.type ?? "image", assetURL: wire.creative?.url),
                ecpm: wire.ecpm.flatMap { $0.isFinite && $0 >= 0 && $0 <= 1_000_000 ? $0 : nil },
                loadedAt: now, expiresAt: now + ttl))
    }
}

@Suite("The tutorial's adapter", .serialized, .timeLimit(.minutes(2)))
struct TutorialAdapterTests {
    @Test func theTutorialsAdapterPassesTheConformanceKitAgainstTheSandbox() async throws {
        let sandbox = try await DemandSandbox.start(
            scenario: SandboxScenario(networks: ["appopen": NetworkScenario(fillRate: 1)]))
        let curl = CurlHTTPClient()
        let wire = RecordingHTTPClient(wrapping: curl)
        let subject = ConformanceSubject(
            network: TinyAppOpenNetwork(baseURL: sandbox.appOpenBaseURL, http: wire),
            wire: wire,
            fillRequest: AdRequest(placement: "ca-app-pub-3940256099942544/5575463023", format: .appOpen),
            privacyFields: [.tcfConsent, .usPrivacy, .gpp])
        let results = await AdNetworkConformance.runAll(subject)
        await curl.shutdown()
        await sandbox.shutdown()
        for result in results {
            if case .failed(let failure) = result.status { Issue.record("\(failure)") }
        }
        #expect(results.contains { $0.status == .passed }, "at least the fill scenario ran")
    }
}

// A sixth, toy network written the way docs/ARCHITECTURE.md's "Adding a network" checklist says, with nothing but the
// public API an outside adapter author has (AdMediation, AdapterKit, DemandSandbox): it proves the checklist.
import AdMediation
import AdTransport
import AdapterKit
import Foundation

/// "Echo": `GET {base}/v1/ad?placement=P` answers `{"id", "ecpm", "image_url", "track_url"}` (200) or 204 no fill;
/// the privacy signals go in the query as AdapterKit's `WirePrivacy` writes them (`gdpr`, `gdpr_consent`,
/// `us_privacy`, `gpp`, `gpp_sid`, `coppa`). Impressions and clicks are pinged in the background by AdapterKit's
/// `TrackingReporter`, on a `BackgroundSender` the network owns and ends at `shutdown()`.
struct EchoNetwork: AdNetwork, BackgroundWork {
    let id: String
    let baseURL: String
    let http: any HTTPClient
    let clock: any AdClock
    let tracking: BackgroundSender
    let capabilities = AdNetworkCapabilities(formats: [.banner], reportsPrice: true)

    init(id: String, baseURL: String, http: any HTTPClient, clock: any AdClock) {
        self.id = id
        self.baseURL = baseURL
        self.http = http
        self.clock = clock
        tracking = BackgroundSender(clock: clock, limits: .tracking)
    }

    /// Sends what tracking is queued, within the sender's grace.
    func shutdown() async { await tracking.shutdown() }

    func load(_ request: AdRequest) async throws -> AdLoadResult {
        guard request.format.kind == .banner else {
            throw AdError(.configuration, "echo serves banners, not \(request.format)")
        }
        let query = [("placement", request.placement)] + WirePrivacy.query(request.privacy, underAge: .coppa)
        let url = HTTPRequest.url(baseURL, appending: "/v1/ad") + "?" + QueryString.encode(query)
        // Every request carries the network's destination rule: the transport holds it at every redirect hop.
        let policy = DestinationPolicy.forNetwork(baseURL: baseURL)
        switch try await RequestRunner(http: http).run(
            HTTPRequest(url: url).requiring(policy, as: .api), deadline: request.timeout ?? .seconds(5))
        {
        case .noFill(let noFill): return .noFill(noFill)
        case .body(let body):
            let wire = try WireCodec.decode(EchoAd.self, from: body, what: "the echo ad")
            guard wire.ecpm.isFinite, wire.ecpm >= 0 else {
                throw AdError(.invalidResponse, "the echo ad: ecpm \(wire.ecpm) is not a price")
            }
            return .filled(
                LoadedAd(
                    networkID: id, placement: request.placement, format: request.format,
                    creative: AdCreative(id: wire.id, kind: "image", assetURL: wire.image_url), ecpm: wire.ecpm,
                    loadedAt: clock.now, expiresAt: clock.now + .seconds(3600),
                    reporter: TrackingReporter(
                        impression: wire.track_url + "&e=impression", click: wire.track_url + "&e=click",
                        policy: policy, sender: tracking, http: http)))
        }
    }
}

/// The echo answer, as sent.
struct EchoAd: Codable {
    var id: String
    var ecpm: Double
    var image_url: String
    var track_url: String
}

/// `{"type": "echo", "base_url": …, "greeting": "hi"}`.
enum EchoFactory: AdNetworkFactory {
    struct Settings: AdNetworkSettings {
        enum Key: String, CodingKey, CaseIterable { case greeting }
        var greeting: String?

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: Key.self)
            greeting = try container.decodeIfPresent(String.self, forKey: .greeting)
        }
    }

    static let type = "echo"
    static let formats: Set<AdFormat.Kind> = [.banner]

    static func make(_ network: NetworkConfiguration<Settings>, context: AdNetworkFactoryContext) throws(AdError)
        -> BuiltNetwork
    {
        BuiltNetwork(EchoNetwork(id: network.id, baseURL: network.baseURL, http: context.http, clock: context.clock))
    }
}

// A sixth, toy network written the way docs/ARCHITECTURE.md's "Adding a network" checklist says, with nothing but the
// public API an outside adapter author has (AdMediation, AdapterKit, DemandSandbox): it proves the checklist.
import AdMediation
import AdTransport
import AdapterKit
import Foundation

/// "Echo": `GET {base}/v1/ad?placement=P` answers `{"id", "ecpm", "image_url", "track_url"}` (200) or 204 no fill;
/// the privacy strings go in the query (`gdpr_consent`, `us_privacy`, `gpp`).
struct EchoNetwork: AdNetwork {
    let id: String
    let baseURL: String
    let http: any HTTPClient
    let clock: any AdClock
    let capabilities = AdNetworkCapabilities(formats: [.banner], reportsPrice: true)

    func load(_ request: AdRequest) async throws -> AdLoadResult {
        guard request.format.kind == .banner else {
            throw AdError(.configuration, "echo serves banners, not \(request.format)")
        }
        var items = URLComponents()
        items.queryItems = [URLQueryItem(name: "placement", value: request.placement)]
        let privacy = request.privacy
        let optional = [("gdpr_consent", privacy.tcfConsent), ("us_privacy", privacy.usPrivacy), ("gpp", privacy.gpp)]
        for case (let name, let value?) in optional { items.queryItems?.append(URLQueryItem(name: name, value: value)) }
        let url = HTTPRequest.url(baseURL, appending: "/v1/ad") + "?" + (items.percentEncodedQuery ?? "")
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
                    reporter: EchoReporter(http: http, trackURL: wire.track_url, policy: policy)))
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

/// Sends each event to the ad's tracking URL (`&e=impression`, …).
struct EchoReporter: AdEventReporter {
    let http: any HTTPClient
    let trackURL: String
    let policy: DestinationPolicy

    func deliver(_ record: AdEventRecord) async throws -> AdEventDelivery {
        let url = trackURL + "&e=" + record.event.name
        _ = try await RequestRunner(http: http).run(
            HTTPRequest(url: url).requiring(policy, as: .tracking), deadline: .seconds(5),
            contract: .init(fill: [200, 204], noFill: [:]))
        return .delivered
    }
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

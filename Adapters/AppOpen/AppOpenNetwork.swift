import AdMediation
import Foundation

/// The AdMob-style app-open network (`specs/app-open.md`) as an ``AdNetwork``. A request's placement is the ad
/// unit id; the test unit ``testAdUnitID`` always fills.
public struct AppOpenNetwork: AdNetwork {
    /// Settings of the adapter.
    public struct Configuration: Sendable {
        /// The network id used in mediation. Default `appopen`.
        public var id: String = "appopen"
        /// The server's base URL (the path `/appopen/v1/ad` is appended).
        public var baseURL: String
        /// Longest validity of an ad whatever the server's TTL says. Default 4 hours.
        public var maximumAge: Duration = .seconds(4 * 3600)
        /// Deadline of a load whose request sets none. Default 10 s.
        public var defaultTimeout: Duration = .seconds(10)

        /// Creates a configuration for `baseURL`.
        public init(baseURL: String) { self.baseURL = baseURL }
    }

    /// Google's test ad unit for app-open ads; "specially configured to return test ads for every request".
    public static let testAdUnitID = "ca-app-pub-3940256099942544/5575463023"

    /// The network id.
    public var id: String { configuration.id }
    /// App-open ads, priced.
    public let capabilities = AdNetworkCapabilities(formats: ["app_open"], loadsWhileShowing: true, reportsPrice: true)
    private let configuration: Configuration
    private let http: any HTTPClient
    private let clock: any AdClock

    /// Creates the adapter.
    public init(configuration: Configuration, http: any HTTPClient, clock: any AdClock = SystemAdClock()) {
        self.configuration = configuration
        self.http = http
        self.clock = clock
    }

    /// Loads an app-open ad for the ad unit `request.placement`.
    public func load(_ request: AdRequest) async throws -> AdLoadResult {
        guard request.format == .appOpen else {
            throw AdError(.configuration, "the app-open network serves app_open, not \(request.format)")
        }
        var query: [(String, String)] = [
            ("ad_unit_id", request.placement), ("request_id", UUID().uuidString.lowercased()),
        ]
        let privacy = request.privacy
        if let gdpr = privacy.gdprApplies { query.append(("gdpr", gdpr ? "1" : "0")) }
        if let tcf = privacy.tcfConsent { query.append(("gdpr_consent", tcf)) }
        if let usp = privacy.usPrivacy { query.append(("us_privacy", usp)) }
        if let gpp = privacy.gpp { query.append(("gpp", gpp)) }
        if !privacy.gppSectionIDs.isEmpty {
            query.append(("gpp_sid", privacy.gppSectionIDs.map(String.init).joined(separator: ",")))
        }
        if privacy.coppa { query.append(("coppa", "1")) }
        if privacy.underAgeOfConsent { query.append(("tfua", "1")) }
        let url = HTTPRequest.url(configuration.baseURL, appending: "/appopen/v1/ad") + "?" + Self.encode(query)

        let response: HTTPResponse
        do {
            response = try await http.send(
                HTTPRequest(url: url, timeout: request.timeout ?? configuration.defaultTimeout))
        } catch let error as HTTPClientError {
            throw AdError(error)
        }
        switch response.status {
        case 200:
            return .filled(try parse(response.body, request: request))
        case 204:
            return .noFill(NoFill(reason: "204 no fill"))
        default:
            throw AdError.http(status: response.status, retryAfter: response.retryAfter, message: response.errorSummary)
        }
    }

    private struct Wire: Decodable {
        struct Creative: Decodable {
            var type: String
            var url: String?
            var headline: String?
            var cta_text: String?
        }
        struct Branding: Decodable { var app_name: String? }
        struct Tracking: Decodable {
            var impression: String
            var click: String
        }
        var ad_id: String
        var creative: Creative
        var branding: Branding?
        var tracking: Tracking
        var ecpm: Double?
        var ttl_seconds: Double?
    }

    /// Decodes a 200 answer. `ttl_seconds`: a negative or non-finite value is ignored (the 4-hour maximum age applies);
    /// any other value shortens the validity, never lengthens it. `ecpm`: a value that is not a finite number
    /// 0…1 000 000 is dropped.
    package func parse(_ body: Data, request: AdRequest) throws -> LoadedAd {
        try JSONLimits().check(body, "app-open ad for \(request.placement)")
        let wire: Wire
        do {
            wire = try JSONDecoder().decode(Wire.self, from: body)
        } catch {
            throw AdError(.invalidResponse, "app-open ad for \(request.placement) could not be read: \(error)")
        }
        guard !wire.ad_id.isEmpty else { throw AdError(.invalidResponse, "app-open ad without ad_id") }
        let now = clock.now
        var validity = configuration.maximumAge
        if let ttl = wire.ttl_seconds.flatMap({ OutsideValue.duration(seconds: $0) }) { validity = min(validity, ttl) }
        var fields: [String: String] = [:]
        fields["headline"] = wire.creative.headline
        fields["cta_text"] = wire.creative.cta_text
        fields["app_name"] = wire.branding?.app_name
        return LoadedAd(
            networkID: id,
            placement: request.placement,
            format: .appOpen,
            creative: AdCreative(id: wire.ad_id, kind: wire.creative.type, assetURL: wire.creative.url, fields: fields),
            ecpm: wire.ecpm.flatMap { $0.isFinite && $0 >= 0 && $0 <= 1_000_000 ? $0 : nil },
            loadedAt: now,
            expiresAt: now + validity,
            reporter: Tracker(http: http, impression: wire.tracking.impression, click: wire.tracking.click))
    }

    /// Fires the tracking URLs: impression and click, each once (``LoadedAd`` guarantees once).
    private struct Tracker: AdEventReporter {
        let http: any HTTPClient
        let impression: String
        let click: String

        func report(_ event: AdEvent, for ad: LoadedAd) async throws {
            let url: String
            switch event {
            case .impression: url = impression
            case .click: url = click
            default: return  // the contract tracks impressions and clicks only
            }
            let response: HTTPResponse
            do {
                response = try await http.send(HTTPRequest(url: url, timeout: .seconds(10)))
            } catch let error as HTTPClientError {
                throw AdError(error)
            }
            guard response.status == 200 || response.status == 204 else {
                throw AdError.http(
                    status: response.status, message: "tracking \(event) failed: \(response.errorSummary)")
            }
        }
    }

    static func encode(_ items: [(String, String)]) -> String {
        var allowed = CharacterSet.urlQueryAllowed
        allowed.remove(charactersIn: "&=+?/")
        return items.map { "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: allowed) ?? $0.1)" }.joined(
            separator: "&")
    }
}

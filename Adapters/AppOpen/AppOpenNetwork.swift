import AdMediation
import AdTransport
import AdapterKit
import AdapterSupport
import Foundation

/// The AdMob-style app-open network (`specs/app-open.md`) as an ``AdNetwork``. A request's placement is the ad
/// unit id; the test unit ``testAdUnitID`` always fills.
///
/// URLs from an answer obey the network's ``DestinationPolicy``: a refused tracking URL makes the fill invalid
/// (`invalidResponse`: the ad could not be counted), a refused creative URL too (it could not be shown).
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
        /// Where URLs from answers (tracking, creative) may go; nil: https to public hosts, or also http and loopback
        /// when ``baseURL`` is loopback (``DestinationPolicy/forNetwork(baseURL:explicit:)``).
        public var destinations: DestinationPolicy? = nil

        /// Creates a configuration for `baseURL`.
        public init(baseURL: String) { self.baseURL = baseURL }
    }

    /// Google's test ad unit for app-open ads; "specially configured to return test ads for every request".
    public static let testAdUnitID = "ca-app-pub-3940256099942544/5575463023"

    /// The network id.
    public var id: String { configuration.id }
    /// App-open ads, priced.
    public let capabilities = AdNetworkCapabilities(formats: [.appOpen], reportsPrice: true)
    private let configuration: Configuration
    private let http: any HTTPClient
    private let clock: any AdClock
    /// Impression and click pings, queued and retried in the background (nothing starts before the first).
    private let tracking: BackgroundSender

    /// Creates the adapter. Nothing starts here: its tracking sender starts with the first ping and runs until
    /// ``shutdown()`` or until the last copy of the network is released.
    public init(configuration: Configuration, http: any HTTPClient, clock: any AdClock = SystemAdClock()) {
        self.configuration = configuration
        self.http = http
        self.clock = clock
        self.tracking = BackgroundSender(clock: clock, limits: .tracking)
    }

    /// Ends the network: sends the queued tracking pings for at most 2 s (on the network's clock), then cancels what
    /// is left and returns once the sender has stopped; pings after this are dropped. Idempotent.
    public func shutdown() async { await tracking.shutdown() }

    /// Tracking pings queued or in flight.
    public var pendingTracking: Int { tracking.pending }

    /// Loads an app-open ad for the ad unit `request.placement`.
    public func load(_ request: AdRequest) async throws -> AdLoadResult {
        guard request.format == .appOpen else {
            throw AdError(.configuration, "the app-open network serves app_open, not \(request.format)")
        }
        var query: [(String, String)] = [
            ("ad_unit_id", request.placement), ("request_id", RandomID.uuidString()),
        ]
        query += WirePrivacy.query(request.privacy, underAge: .tfua)
        let url = HTTPRequest.url(configuration.baseURL, appending: "/appopen/v1/ad") + "?" + QueryString.encode(query)

        let destinations = DestinationPolicy.forNetwork(
            baseURL: configuration.baseURL, explicit: configuration.destinations)
        switch try await RequestRunner(http: http).run(
            HTTPRequest(url: url).requiring(destinations, as: .api),
            deadline: request.timeout ?? configuration.defaultTimeout)
        {
        case .body(let body): return .filled(try parse(body, request: request))
        case .noFill(let noFill): return .noFill(noFill)
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
        let wire = try WireCodec.decode(Wire.self, from: body, what: "app-open ad for \(request.placement)")
        guard !wire.ad_id.isEmpty else { throw AdError(.invalidResponse, "app-open ad without ad_id") }
        let destinations = DestinationPolicy.forNetwork(
            baseURL: configuration.baseURL, explicit: configuration.destinations)
        do throws(DestinationRefusal) {
            try destinations.required(
                [(wire.tracking.impression, .tracking), (wire.tracking.click, .tracking), (wire.creative.url, .asset)],
                network: id)
        } catch {
            throw AdError(.invalidResponse, "app-open ad for \(request.placement): \(error.message)")
        }
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
            ecpm: WirePrice.ecpm(wire.ecpm),
            loadedAt: now,
            expiresAt: now + validity,
            reporter: TrackingReporter(
                impression: wire.tracking.impression, click: wire.tracking.click, policy: destinations,
                sender: tracking, http: http))
    }
}

extension AppOpenNetwork: BackgroundWork {}

import AdMediation
import AdTransport
import AdapterKit
import AdapterSupport
import Crypto
import Foundation

/// The Chartboost-style banner network (`specs/chartboost-style.md`) as an ``AdNetwork``: HMAC-signed requests,
/// the three banner sizes, locations as placements, size-mismatch discard, tracking fired once.
///
/// The app signature is a secret: it signs requests and appears in no log, error or description. The app id and the
/// signature go only to the configured host (the origin of ``Configuration/baseURL``): a fill's tracking URLs on
/// another host are fetched unsigned, and the transport never forwards them across a redirect to another origin.
///
/// URLs from a fill obey the network's ``DestinationPolicy``: a refused tracking or image URL makes the fill invalid
/// (`invalidResponse`: the ad could not be counted or shown); a refused `click_url` is dropped (logged and counted),
/// the ad stays usable without it.
public struct ChartboostNetwork: AdNetwork {
    /// Settings of the adapter.
    public struct Configuration: Sendable, CustomStringConvertible {
        /// The network id used in mediation. Default `chartboost`.
        public var id: String = "chartboost"
        /// The server's base URL (`/banner/v1/load` is appended).
        public var baseURL: String
        /// The app id (`X-CB-App-Id`).
        public var appID: String
        /// The app signature, the HMAC key. Secret.
        public var appSignature: String
        /// Deadline of a load whose request sets none. Default 15 s (Chartboost's banner load timeout).
        public var defaultTimeout: Duration = .seconds(15)
        /// Where URLs from fills (tracking, creative, `click_url`) may go; nil: https to public hosts, or also http
        /// and loopback when ``baseURL`` is loopback (``DestinationPolicy/forNetwork(baseURL:explicit:)``).
        public var destinations: DestinationPolicy? = nil

        /// Creates a configuration.
        public init(baseURL: String, appID: String, appSignature: String) {
            self.baseURL = baseURL
            self.appID = appID
            self.appSignature = appSignature
        }

        /// Describes the configuration without the signature.
        public var description: String {
            "ChartboostNetwork(id: \(id), baseURL: \(baseURL), appID: \(appID), appSignature: <redacted>)"
        }
    }

    /// The banner sizes the network serves.
    public static let sizes: [BannerSize] = [.standard, .medium, .leaderboard]

    /// The network id.
    public var id: String { configuration.id }
    /// Banners, priced.
    public let capabilities = AdNetworkCapabilities(formats: [.banner], reportsPrice: true)
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

    /// Loads a banner of `request.format`'s size for the location `request.placement`.
    public func load(_ request: AdRequest) async throws -> AdLoadResult {
        guard case .banner(let size) = request.format, Self.sizes.contains(size) else {
            throw AdError(.configuration, "Chartboost banners are 320x50, 300x250 or 728x90, not \(request.format)")
        }
        let privacy = WirePrivacy.object(request.privacy, underAge: .coppa)
        let body = LoadBody(
            requestID: RandomID.uuidString(), location: request.placement,
            size: .init(width: size.width, height: size.height), testMode: request.testMode,
            privacy: privacy.isEmpty ? nil : privacy)
        let url = HTTPRequest.url(configuration.baseURL, appending: "/banner/v1/load")
        switch try await runner.run(
            try WireCodec.request(url: url, body: body).requiring(destinations, as: .api),
            deadline: request.timeout ?? configuration.defaultTimeout)
        {
        case .body(let body): return try parse(body, request: request, size: size)
        case .noFill(let noFill): return .noFill(noFill)
        }
    }

    /// The load request's body (specs/chartboost-style.md): `privacy` only when a signal is set.
    struct LoadBody: Encodable {
        struct Size: Encodable {
            let width: Int
            let height: Int
        }

        let requestID: String
        let location: String
        let size: Size
        let testMode: Bool
        let privacy: WirePrivacy.Object?

        enum CodingKeys: String, CodingKey {
            case location, size, privacy
            case requestID = "request_id"
            case testMode = "test_mode"
        }
    }

    /// The policy URLs from fills must pass.
    var destinations: DestinationPolicy {
        .forNetwork(baseURL: configuration.baseURL, explicit: configuration.destinations)
    }

    /// Whether `url` goes to the configured host (same scheme, host and port as ``Configuration/baseURL``).
    func isConfiguredOrigin(_ url: String) -> Bool {
        guard let base = try? URLDestination(parsing: configuration.baseURL),
            let target = try? URLDestination(parsing: url)
        else { return false }
        return base.origin == target.origin
    }

    /// Sends a request, signed (app id and signature) only when it goes to the configured host. Transport failures
    /// become ``AdError``s.
    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        try await runner.response(to: request)
    }

    /// The request runner sending signed requests.
    private var runner: RequestRunner {
        RequestRunner { [self] in try await http.send(signed($0)) }
    }

    /// `request` with the app id and signature when it goes to the configured host; otherwise unchanged.
    private func signed(_ request: HTTPRequest) -> HTTPRequest {
        var request = request
        if isConfiguredOrigin(request.url) {
            request.headers.replaceOrAdd(name: "X-CB-App-Id", value: configuration.appID)
            request.headers.replaceOrAdd(
                name: "X-CB-Signature",
                value: Self.signature(
                    secret: configuration.appSignature, method: request.method.rawValue,
                    pathWithQuery: Self.pathWithQuery(request.url), body: request.body ?? Data()))
        }
        return request
    }

    /// `hex(HMAC-SHA256(key: secret, METHOD + "\n" + path-with-query + "\n" + body))`.
    public static func signature(secret: String, method: String, pathWithQuery: String, body: Data) -> String {
        var message = Data("\(method)\n\(pathWithQuery)\n".utf8)
        message.append(body)
        let mac = HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: Data(secret.utf8)))
        return Hex.encode(mac)
    }

    static func pathWithQuery(_ url: String) -> String {
        guard let components = URLComponents(string: url) else { return "/" }
        let path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        if let query = components.percentEncodedQuery { return path + "?" + query }
        return path
    }

    private struct Wire: Decodable {
        struct Size: Decodable {
            var width: Int
            var height: Int
        }
        struct Creative: Decodable {
            var type: String
            var url: String?
            var markup: String?
        }
        struct Tracking: Decodable {
            var impression: String
            var click: String
        }
        var ad_id: String
        var size: Size
        var creative: Creative
        var click_url: String?
        var tracking: Tracking
        var ecpm: Double?
        var expires_in_seconds: Double?
    }

    /// Decodes a load answer (a 200 body) into a fill or a no fill. `expires_in_seconds`: negative or not finite
    /// makes the ad invalid (`invalidResponse`); above 7 days it is clamped to 7 days. `ecpm`: a value that is not a
    /// finite number 0…1 000 000 is dropped (the ad is unpriced).
    package func parse(_ body: Data, request: AdRequest, size: BannerSize) throws -> AdLoadResult {
        let wire = try WireCodec.decode(Wire.self, from: body, what: "Chartboost banner for \(request.placement)")
        guard wire.size.width == size.width && wire.size.height == size.height else {
            return .noFill(NoFill(reason: "size mismatch: asked \(size), got \(wire.size.width)x\(wire.size.height)"))
        }
        guard ["image", "html"].contains(wire.creative.type),
            wire.creative.type == "image" ? wire.creative.url != nil : wire.creative.markup != nil
        else {
            throw AdError(
                .invalidResponse, "Chartboost creative of type \(wire.creative.type) without its url or markup")
        }
        let destinations = self.destinations
        do throws(DestinationRefusal) {
            try destinations.required(
                [(wire.tracking.impression, .tracking), (wire.tracking.click, .tracking), (wire.creative.url, .asset)],
                network: id)
        } catch {
            throw AdError(.invalidResponse, "Chartboost banner for \(request.placement): \(error.message)")
        }
        let clickURL = destinations.optional(wire.click_url, as: .click, network: id)
        let now = clock.now
        var expiresAt: AdInstant?
        if let seconds = wire.expires_in_seconds {
            guard let validity = OutsideValue.duration(seconds: seconds) else {
                throw AdError(
                    .invalidResponse,
                    "Chartboost banner for \(request.placement): expires_in_seconds must be 0…604800, got \(seconds)")
            }
            expiresAt = now + validity
        }
        return .filled(
            LoadedAd(
                networkID: id,
                placement: request.placement,
                format: request.format,
                creative: AdCreative(
                    id: wire.ad_id, kind: wire.creative.type, assetURL: wire.creative.url, clickURL: clickURL,
                    markup: wire.creative.markup, width: wire.size.width, height: wire.size.height),
                ecpm: WirePrice.ecpm(wire.ecpm),
                loadedAt: now,
                expiresAt: expiresAt,
                reporter: TrackingReporter(
                    impression: wire.tracking.impression, click: wire.tracking.click, policy: destinations,
                    sender: tracking
                ) { [self] in
                    try await send($0)
                }))
    }
}

extension ChartboostNetwork: BackgroundWork {}

import AdapterKit
import Crypto
import Foundation
import SandboxRouting

/// The Chartboost-style banner network (`specs/chartboost-style.md`) in the demand sandbox, under `/chartboost`:
/// `POST /chartboost/banner/v1/load` and `GET /chartboost/banner/v1/track`, each signed with the app's signature.
/// Listed once, with the network's factory, in the registry of built-in networks (`BuiltInNetworks`).
public struct ChartboostRoutes: SandboxRouteModule {
    /// The sizes the spec defines, `[width, height]`.
    static let sizes: Set<[Int]> = [[320, 50], [300, 250], [728, 90]]

    /// `chartboost`.
    public let network = "chartboost"
    /// The accepted app ids and their app signatures (the HMAC keys).
    public let apps: [String: String]

    /// Creates the module accepting `apps` (app id → app signature). Default: `cb_app_demo`.
    public init(apps: [String: String] = ["cb_app_demo": "cb_sig_demo_secret"]) {
        self.apps = apps
    }

    /// A 320x50 banner line, `Main Menu`, signed as the first of ``apps`` (by app id) — the sandbox's demo app unless
    /// the module was made with others; nil when it accepts no app.
    public var sample: SandboxSample? {
        guard let app = apps.keys.min(), let signature = apps[app] else { return nil }
        return SandboxSample(
            settings: ["app_id": app, "app_signature": signature], format: "banner", size: "320x50",
            placement: "Main Menu")
    }

    /// `hex(HMAC-SHA256(key: secret, METHOD + "\n" + path-with-query + "\n" + body))`, the Chartboost-style signature.
    public static func signature(secret: String, method: String, pathWithQuery: String, body: Data) -> String {
        var message = Data("\(method)\n\(pathWithQuery)\n".utf8)
        message.append(body)
        let mac = HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: Data(secret.utf8)))
        return Hex.encode(mac)
    }

    /// Answers one request under `/chartboost`.
    public func respond(to request: SandboxRequest) -> SandboxReply {
        guard let appID = request.header("X-CB-App-Id"), let secret = apps[appID] else {
            return Self.error(401, "unauthorized", "missing or unknown X-CB-App-Id")
        }
        let expected = Self.signature(
            secret: secret, method: request.method, pathWithQuery: request.target, body: request.body)
        guard let signature = request.header("X-CB-Signature"), signature.lowercased() == expected else {
            return Self.error(401, "invalid_signature", "missing or wrong X-CB-Signature")
        }
        switch (request.method, request.path) {
        case ("POST", "/banner/v1/load"): return load(request)
        case ("GET", "/banner/v1/track"): return .tracked(204)
        default: return Self.error(404, "not_found", "no Chartboost route \(request.method) \(request.path)")
        }
    }

    private func load(_ request: SandboxRequest) -> SandboxReply {
        guard let body = try? JSONDecoder().decode(LoadBody.self, from: request.body) else {
            return Self.error(400, "malformed_json", "the body is not a JSON object of the load request's shape")
        }
        guard let location = body.location, !location.isEmpty else {
            return Self.error(400, "invalid_request", "location is required")
        }
        guard let width = body.size?.width, let height = body.size?.height, Self.sizes.contains([width, height]) else {
            return Self.error(400, "invalid_size", "size must be 320x50, 300x250 or 728x90")
        }
        var options = SandboxAdOptions()
        let privacy = body.privacy ?? [:]
        options.privacy = privacy.keys.sorted().map { "\($0)=\(privacy[$0]?.text ?? "")" }.joined(separator: "&")
        let base = request.baseURL, root = request.rootURL
        return .ad(placement: location, options: options) { fill in
            let id = "cb_ad_\(fill.serial)"
            let track = "\(base)/banner/v1/track"
            let ad = WireAd(
                ad_id: id, location: location, size: .init(width: width, height: height),
                creative: .init(type: "image", url: "\(root)/growthcat/assets/\(id).png", markup: nil),
                click_url: "https://advertiser.example.com/landing/\(id)",
                tracking: .init(impression: "\(track)?e=impression&ad=\(id)", click: "\(track)?e=click&ad=\(id)"),
                ecpm: fill.ecpm, expires_in_seconds: 3600)
            return SandboxReply.encoded(ad)
        }
    }

    /// The spec's error body, `{"error": {"code": …, "message": …}}`.
    static func error(_ status: Int, _ code: String, _ message: String) -> SandboxReply {
        .error(status, code: code, message: message)
    }

    /// The load request's fields the sandbox reads (any other is ignored). A field of the wrong type reads as absent,
    /// so the answer names the field (`location is required`), not the body.
    struct LoadBody: Decodable {
        struct Size: Decodable {
            var width: Int?
            var height: Int?

            init(from decoder: any Decoder) throws {
                let container = try decoder.container(keyedBy: CodingKeys.self)
                width = try? container.decodeIfPresent(Int.self, forKey: .width)
                height = try? container.decodeIfPresent(Int.self, forKey: .height)
            }
            enum CodingKeys: String, CodingKey { case width, height }
        }
        var location: String?
        var size: Size?
        var privacy: [String: Scalar]?

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            location = try? container.decodeIfPresent(String.self, forKey: .location)
            size = try? container.decodeIfPresent(Size.self, forKey: .size)
            privacy = try? container.decodeIfPresent([String: Scalar].self, forKey: .privacy)
        }
        enum CodingKeys: String, CodingKey { case location, size, privacy }
    }

    /// A privacy value as text: a number, a string or a boolean (`1`/`0`, as the wire's flags are numbers).
    struct Scalar: Decodable {
        var text: String

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let value = try? container.decode(Int.self) {
                text = String(value)
            } else if let value = try? container.decode(Bool.self) {
                text = value ? "1" : "0"
            } else if let value = try? container.decode(Double.self) {
                text = String(value)
            } else if let value = try? container.decode(String.self) {
                text = value
            } else {
                text = ""
            }
        }
    }

    /// An ad as the spec's load answers it.
    struct WireAd: Encodable {
        struct Size: Encodable {
            var width: Int
            var height: Int
        }
        struct Creative: Encodable {
            var type: String
            var url: String
            var markup: String?

            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(type, forKey: .type)
                try container.encode(url, forKey: .url)
                try container.encode(markup, forKey: .markup)  // `null` when absent, as the spec shows it
            }
            enum CodingKeys: String, CodingKey { case type, url, markup }
        }
        struct Tracking: Encodable {
            var impression: String
            var click: String
        }
        var ad_id: String
        var location: String
        var size: Size
        var creative: Creative
        var click_url: String
        var tracking: Tracking
        var ecpm: Double
        var expires_in_seconds: Int
    }
}

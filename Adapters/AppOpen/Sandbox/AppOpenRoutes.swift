import Foundation
import SandboxRouting

/// The app-open network (`specs/app-open.md`) in the demand sandbox, under `/appopen`: `GET /appopen/v1/ad` (the ad
/// units below; Google's documented test unit always fills) and `GET /appopen/v1/track` (a tracking hit, 204).
/// Listed once, with the network's factory, in the registry of built-in networks (`BuiltInNetworks`).
public struct AppOpenRoutes: SandboxRouteModule {
    /// Google's documented test ad unit: always fills.
    public static let testAdUnit = "ca-app-pub-3940256099942544/5575463023"
    /// The ad units the sandbox knows; any other is refused with `invalid_ad_unit`.
    public static let adUnits: Set<String> = [
        testAdUnit, "ca-app-pub-sandbox/app_open_main", "ca-app-pub-sandbox/app_open_resume",
    ]
    /// The privacy query items an ad request may carry, kept in the sandbox's records as received.
    static let privacyKeys = ["gdpr", "gdpr_consent", "us_privacy", "gpp", "gpp_sid", "coppa", "tfua"]

    /// `appopen`.
    public let network = "appopen"

    /// Creates the module.
    public init() {}

    /// An app-open line, `ca-app-pub-sandbox/app_open_main`; the network has no settings.
    public var sample: SandboxSample? {
        SandboxSample(format: "app_open", placement: "ca-app-pub-sandbox/app_open_main")
    }

    /// Answers one request under `/appopen`.
    public func respond(to request: SandboxRequest) -> SandboxReply {
        switch (request.method, request.path) {
        case ("GET", "/appopen/v1/ad"):
            guard let unit = request.query["ad_unit_id"], !unit.isEmpty else {
                return Self.error(400, "invalid_request", "ad_unit_id is required")
            }
            guard let requestID = request.query["request_id"], !requestID.isEmpty else {
                return Self.error(400, "invalid_request", "request_id is required")
            }
            guard Self.adUnits.contains(unit) else {
                return Self.error(400, "invalid_ad_unit", "unknown ad unit \(unit)")
            }
            var options = SandboxAdOptions()
            options.privacy = Self.privacyKeys.compactMap { key in request.query[key].map { "\(key)=\($0)" } }
                .joined(separator: "&")
            options.alwaysFills = unit == Self.testAdUnit
            let base = request.baseURL, root = request.rootURL
            return .ad(placement: unit, options: options) { fill in
                let id = "ao_\(fill.serial)"
                let track = "\(base)/appopen/v1/track"
                let ad = WireAd(
                    ad_id: id, ad_unit_id: unit,
                    creative: .init(
                        type: "image", url: "\(root)/growthcat/assets/\(id).png", headline: "Sunny Puzzles",
                        cta_text: "Play"),
                    branding: .init(app_name: "Sandbox App"),
                    tracking: .init(impression: "\(track)?e=impression&ad=\(id)", click: "\(track)?e=click&ad=\(id)"),
                    ecpm: fill.ecpm, ttl_seconds: 14_400)
                return SandboxReply.encoded(ad)
            }
        case ("GET", "/appopen/v1/track"):
            return .tracked(204)
        default:
            return Self.error(404, "not_found", "no app-open route \(request.method) \(request.path)")
        }
    }

    /// The spec's error body, `{"error": {"code": …, "message": …}}`.
    static func error(_ status: Int, _ code: String, _ message: String) -> SandboxReply {
        .error(status, code: code, message: message)
    }

    /// An ad as the spec's `GET /appopen/v1/ad` answers it.
    struct WireAd: Encodable {
        struct Creative: Encodable {
            var type: String
            var url: String
            var headline: String
            var cta_text: String
        }
        struct Branding: Encodable { var app_name: String }
        struct Tracking: Encodable {
            var impression: String
            var click: String
        }
        var ad_id: String
        var ad_unit_id: String
        var creative: Creative
        var branding: Branding
        var tracking: Tracking
        var ecpm: Double
        var ttl_seconds: Int
    }
}

import AdapterKit
import Foundation
import Hummingbird

/// The AdMob-style app-open network (`specs/app-open.md`) under `/appopen`.
extension SandboxState {
    /// Google's documented test ad unit: always fills.
    public static let appOpenTestAdUnit = "ca-app-pub-3940256099942544/5575463023"
    static let appOpenAdUnits: Set<String> = [
        appOpenTestAdUnit, "ca-app-pub-sandbox/app_open_main", "ca-app-pub-sandbox/app_open_resume",
    ]

    func appOpen(_ incoming: Incoming, context: SandboxContext) async -> Response {
        let path = String(incoming.path.dropFirst("/appopen".count))
        switch (incoming.method, path) {
        case ("GET", "/appopen/v1/ad"):
            guard let unit = incoming.query["ad_unit_id"], !unit.isEmpty else {
                return Self.error(400, "invalid_request", "ad_unit_id is required")
            }
            guard let requestID = incoming.query["request_id"], !requestID.isEmpty else {
                return Self.error(400, "invalid_request", "request_id is required")
            }
            guard Self.appOpenAdUnits.contains(unit) else {
                return Self.error(400, "invalid_ad_unit", "unknown ad unit \(unit)")
            }
            let keys = ["gdpr", "gdpr_consent", "us_privacy", "gpp", "gpp_sid", "coppa", "tfua"]
            let privacy = keys.compactMap { key in incoming.query[key].map { "\(key)=\($0)" } }.joined(separator: "&")
            record { $0.adRequestPrivacy.append(privacy) }
            var draw = self.draw(network: "appopen", placement: unit)
            if unit == Self.appOpenTestAdUnit { draw.fills = true }
            guard draw.fills else {
                if let faulted = await applyDraw(draw, validBody: Data(), context: context) { return faulted }
                return Self.empty(204)
            }
            let id = "ao_\(nextSerial())"
            let track = "\(baseURL)/appopen/appopen/v1/track"
            let ad: [String: Any] = [
                "ad_id": id, "ad_unit_id": unit,
                "creative": [
                    "type": "image", "url": "\(baseURL)/growthcat/assets/\(id).png", "headline": "Sunny Puzzles",
                    "cta_text": "Play",
                ],
                "branding": ["app_name": "Sandbox App"],
                "tracking": ["impression": "\(track)?e=impression&ad=\(id)", "click": "\(track)?e=click&ad=\(id)"],
                "ecpm": draw.ecpm, "ttl_seconds": 14_400,
            ]
            let body = JSONWriter.data(ad) ?? Data()
            if let faulted = await applyDraw(draw, validBody: body, context: context) { return faulted }
            return Self.json(200, body)
        case ("GET", "/appopen/v1/track"):
            record {
                $0.trackingHits.append(CallbackRecord(network: "appopen", path: incoming.path, query: incoming.query))
            }
            return Self.empty(204)
        default:
            return Self.error(404, "not_found", "no app-open route \(incoming.method) \(path)")
        }
    }
}

import AdapterKit
import Crypto
import Foundation
import Hummingbird

/// The Chartboost-style banner network (`specs/chartboost-style.md`) under `/chartboost`.
extension SandboxState {
    static let chartboostSizes: Set<[Int]> = [[320, 50], [300, 250], [728, 90]]

    func chartboost(_ incoming: Incoming, context: SandboxContext) async -> Response {
        guard let appID = incoming.header("X-CB-App-Id"), let secret = configuration.chartboostApps[appID] else {
            return Self.error(401, "unauthorized", "missing or unknown X-CB-App-Id")
        }
        let expected = chartboostSignature(
            secret: secret, method: incoming.method, pathWithQuery: incoming.pathWithQuery, body: incoming.body)
        guard let signature = incoming.header("X-CB-Signature"), signature.lowercased() == expected else {
            return Self.error(401, "invalid_signature", "missing or wrong X-CB-Signature")
        }
        let path = String(incoming.path.dropFirst("/chartboost".count))
        switch (incoming.method, path) {
        case ("POST", "/banner/v1/load"):
            return await chartboostLoad(incoming, context: context)
        case ("GET", "/banner/v1/track"):
            record {
                $0.trackingHits.append(
                    CallbackRecord(network: "chartboost", path: incoming.path, query: incoming.query))
            }
            return Self.empty(204)
        default:
            return Self.error(404, "not_found", "no Chartboost route \(incoming.method) \(path)")
        }
    }

    private func chartboostLoad(_ incoming: Incoming, context: SandboxContext) async -> Response {
        guard let object = try? JSONSerialization.jsonObject(with: incoming.body) as? [String: Any] else {
            return Self.error(400, "malformed_json", "the body is not a JSON object")
        }
        guard let location = object["location"] as? String, !location.isEmpty else {
            return Self.error(400, "invalid_request", "location is required")
        }
        guard let size = object["size"] as? [String: Any], let width = size["width"] as? Int,
            let height = size["height"] as? Int,
            Self.chartboostSizes.contains([width, height])
        else {
            return Self.error(400, "invalid_size", "size must be 320x50, 300x250 or 728x90")
        }
        if let privacy = object["privacy"] as? [String: Any] {
            let text = privacy.keys.sorted().map { "\($0)=\(privacy[$0] ?? "")" }.joined(separator: "&")
            record { $0.adRequestPrivacy.append(text) }
        } else {
            record { $0.adRequestPrivacy.append("") }
        }
        let draw = self.draw(network: "chartboost", placement: location)
        guard draw.fills else {
            if let faulted = await applyDraw(draw, validBody: Data(), context: context) { return faulted }
            return Self.empty(204)
        }
        let id = "cb_ad_\(nextSerial())"
        let track = "\(baseURL)/chartboost/banner/v1/track"
        let ad: [String: Any] = [
            "ad_id": id, "location": location, "size": ["width": width, "height": height],
            "creative": ["type": "image", "url": "\(baseURL)/growthcat/assets/\(id).png", "markup": NSNull()],
            "click_url": "https://advertiser.example.com/landing/\(id)",
            "tracking": ["impression": "\(track)?e=impression&ad=\(id)", "click": "\(track)?e=click&ad=\(id)"],
            "ecpm": draw.ecpm, "expires_in_seconds": 3600,
        ]
        let body = JSONWriter.data(ad) ?? Data()
        if let faulted = await applyDraw(draw, validBody: body, context: context) { return faulted }
        return Self.json(200, body)
    }
}

/// `hex(HMAC-SHA256(key: secret, METHOD + "\n" + path-with-query + "\n" + body))`, the Chartboost-style signature.
public func chartboostSignature(secret: String, method: String, pathWithQuery: String, body: Data) -> String {
    var message = Data("\(method)\n\(pathWithQuery)\n".utf8)
    message.append(body)
    let mac = HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: Data(secret.utf8)))
    return Hex.encode(mac)
}

import Foundation
import SandboxRouting

/// The echo network in the sandbox: `GET /echo/v1/ad` (placements `echo_banner` and `echo_slow`; any other is a 400),
/// and `GET /echo/v1/track` (204).
struct EchoRoutes: SandboxRouteModule {
    let network = "echo"
    static let placements: Set<String> = ["echo_banner", "echo_slow"]

    func respond(to request: SandboxRequest) -> SandboxReply {
        switch (request.method, request.path) {
        case ("GET", "/v1/ad"):
            guard let placement = request.query["placement"], Self.placements.contains(placement) else {
                return .json(400, Data(#"{"error": "unknown placement"}"#.utf8))
            }
            let base = request.baseURL
            return .ad(placement: placement) { ecpm in
                let ad = EchoAd(
                    id: "echo-\(placement)", ecpm: ecpm, image_url: base + "/img.png",
                    track_url: base + "/v1/track?ad=echo-\(placement)")
                return (try? JSONEncoder().encode(ad)) ?? Data("{}".utf8)
            }
        case ("GET", "/v1/track"): return .empty(204)
        default: return .json(404, Data(#"{"error": "no route"}"#.utf8))
        }
    }
}

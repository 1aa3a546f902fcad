import AdMediation
import Foundation

/// The default context id: a UUID v4 per client, rotated once it is 3 days old; on rotation the old id is sent
/// to `DELETE {base}/delete_user` (fire and forget; errors ignored).
final class RotatingContextID: MozAdsContextIDProvider {
    static let rotation: TimeInterval = 3 * 24 * 3600
    private struct State {
        var id: String
        var createdAt: Date
    }
    private let state: LockedValue<State>
    private let environment: MozAdsEnvironment
    private let http: any HTTPClient
    private let now: @Sendable () -> Date

    init(environment: MozAdsEnvironment, http: any HTTPClient, now: @escaping @Sendable () -> Date) {
        self.environment = environment
        self.http = http
        self.now = now
        self.state = LockedValue(State(id: UUID().uuidString.lowercased(), createdAt: now()))
    }

    func contextID() async -> String {
        let current = now()
        let (id, retired): (String, String?) = state.withLock { s in
            guard current.timeIntervalSince(s.createdAt) >= Self.rotation || current < s.createdAt else {
                return (s.id, nil)
            }
            let old = s.id
            s = State(id: UUID().uuidString.lowercased(), createdAt: current)
            return (s.id, old)
        }
        if let retired {
            // Upstream concatenates the base with "/delete_user", which leaves a double slash; kept on purpose.
            let url = environment.baseURL + "/delete_user"
            let body = (try? JSONSerialization.data(withJSONObject: ["context_id": retired])) ?? Data()
            let http = http
            Task {
                _ = try? await http.send(
                    HTTPRequest(
                        method: .delete, url: url, headers: ["Content-Type": "application/json"], body: body,
                        timeout: .seconds(30)
                    ).requiring(.forNetwork(baseURL: url), as: .api))
            }
        }
        return id
    }
}

/// A context-id provider that always returns the same id (an embedder's own, used verbatim).
public struct FixedContextIDProvider: MozAdsContextIDProvider {
    private let id: String
    /// Uses `id` as given.
    public init(_ id: String) { self.id = id }
    /// The id.
    public func contextID() async -> String { id }
}

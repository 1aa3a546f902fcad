import AdMediation
import AdTransport
import AdapterKit
import AdapterSupport
import Foundation

/// The default context id: a UUID v4 per client, rotated once it is 3 days old; on rotation the old id is sent
/// to `DELETE {base}/delete_user`, one attempt as upstream makes (errors ignored), queued on the client's background
/// sender: the client's `shutdown()` lets it go out within its grace, and nothing outlives the client.
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
    /// Where the retired ids' `DELETE`s wait and go out (owned by the client, which shuts it down).
    private let sender: BackgroundSender

    /// One attempt (upstream sends once), 30 s for it, a few waiting, one at a time, 2 s at shutdown.
    static let deleteLimits = BackgroundSender.Limits(
        attempts: 1, timeout: .seconds(30), deadline: .seconds(30), queue: 16, concurrency: 1,
        shutdownGrace: .seconds(2))

    init(
        environment: MozAdsEnvironment, http: any HTTPClient, now: @escaping @Sendable () -> Date,
        sender: BackgroundSender
    ) {
        self.environment = environment
        self.http = http
        self.now = now
        self.sender = sender
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
            // A string member only: encoding cannot fail.
            let body = (try? JSONEncoder().encode(["context_id": retired])) ?? Data()
            let http = http
            let rule = DestinationRule(policy: .forNetwork(baseURL: url), kind: .api)
            sender.send(url, meeting: rule) { request in
                var delete = HTTPRequest(
                    method: .delete, url: request.url, headers: ["Content-Type": "application/json"], body: body,
                    timeout: request.timeout)
                delete.destination = request.destination
                return try await http.send(delete)
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

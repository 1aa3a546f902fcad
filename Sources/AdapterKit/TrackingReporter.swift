import AdMediation
import AdTransport
import Foundation

/// Fires a served ad's impression and click tracking URLs through the network's bounded ``BackgroundSender`` (each
/// impression once and each click per tap: ``LoadedAd`` decides), sent the adapter's way (which may sign requests).
///
/// What the user saw is local truth: the event is recorded as ``AdEventDelivery/queued`` at once and the ping is
/// retried with back-off within the sender's bound in the background, so a slow or failing tracker never holds the
/// app's callback, never turns a click into an error and never blocks the clicks after a failed impression ping.
public struct TrackingReporter: AdEventReporter {
    /// Sends one request the adapter's way.
    public typealias Send = BackgroundSender.Send

    let send: Send
    let sender: BackgroundSender
    let impression: String
    let click: String
    /// The network's destination policy: each ping's request carries it (``HTTPRequest/destination``).
    let policy: DestinationPolicy
    /// Fired once the impression ping was attempted (or dropped): click pings wait for it, so the tracker sees the
    /// impression first whatever the sender's concurrency.
    let impressionAttempted = OnceSignal()

    /// A reporter for the two URLs (already checked against `policy`), queued on `sender` and sent with `send`.
    public init(
        impression: String, click: String, policy: DestinationPolicy, sender: BackgroundSender,
        send: @escaping Send
    ) {
        self.send = send
        self.sender = sender
        self.impression = impression
        self.click = click
        self.policy = policy
    }

    /// A reporter sending through `http`.
    public init(
        impression: String, click: String, policy: DestinationPolicy, sender: BackgroundSender, http: any HTTPClient
    ) {
        self.init(impression: impression, click: click, policy: policy, sender: sender) { try await http.send($0) }
    }

    /// Queues the impression or click URL (``AdEventDelivery/queued``); any other event is
    /// ``AdEventDelivery/notSent``: these contracts do not track it. Throws only when the sender's queue is full or
    /// the network was shut down (nothing will ever send it).
    public func deliver(_ record: AdEventRecord) async throws -> AdEventDelivery {
        let url: String
        let through: Send
        switch record.event {
        case .impression:
            url = impression
            let (send, attempted) = (send, impressionAttempted)
            through = { request in
                defer { attempted.fire() }
                return try await send(request)
            }
        case .click:
            url = click
            let (send, attempted) = (send, impressionAttempted)
            through = { request in
                await attempted.wait()
                return try await send(request)
            }
        default: return .notSent
        }
        let queued = sender.send(url, meeting: DestinationRule(policy: policy, kind: .tracking), through: through)
        if record.event == .impression && !queued { impressionAttempted.fire() }
        guard queued else {
            throw AdError(.network, "tracking \(record.event) was dropped: the tracking queue is full or shut down")
        }
        return .queued
    }
}

import AdMediation
import AdTransport
import AdapterKit
import AdapterSupport

/// The bidder's win, loss and billing notices, sent through the shared bounded sender (``BackgroundSender``: queue,
/// concurrency, retries with back-off within a deadline, a shutdown grace) over the bidder's HTTP client.
struct NoticeSender: Sendable {
    typealias Limits = BackgroundSender.Limits

    private let sender: BackgroundSender
    private let http: any HTTPClient

    init(http: any HTTPClient, clock: any AdClock, limits: Limits) {
        self.sender = BackgroundSender(clock: clock, limits: limits)
        self.http = http
    }

    /// Queues the notice `url` (after macro substitution) unless it is nil or its destination is refused; drops and
    /// counts it when the queue is full or the sender has been shut down. Returns whether it was queued.
    @discardableResult
    func send(_ url: String?, context: NoticeContext, _ values: NoticeValues) -> Bool {
        guard let url else { return false }
        let resolved = context.substitute(url, values)
        guard context.isFetchable(resolved) else { return false }
        let http = self.http
        return sender.send(resolved, meeting: DestinationRule(policy: context.destinations, kind: .notice)) {
            try await http.send($0)
        }
    }

    /// Notices queued or in flight.
    var pending: Int { sender.pending }
    /// Notices never sent: the queue was full, the sender had been shut down, or the shutdown grace cut them off.
    var dropped: Int { sender.dropped }
    /// Notices given up after their attempts or their deadline.
    var failed: Int { sender.failed }

    /// Ends the queue; what is queued is still sent.
    func finish() { sender.finish() }

    /// Ends the queue and waits for it to drain, at most the shutdown grace; then cancels what is left.
    func shutdown() async { await sender.shutdown() }
}

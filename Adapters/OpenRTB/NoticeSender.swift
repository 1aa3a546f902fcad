import AdMediation
import Synchronization

/// Sends win and loss notices in the background, up to 8 at once, retrying transport errors and 5xx answers with
/// backoff (250 ms, then doubling) on the network's clock. One task, owned by the ``BiddingNetwork``: it ends when the
/// network is released or shut down, after sending what was queued. The queue holds at most 10 000 notices; beyond
/// that a notice is dropped and counted.
final class NoticeSender: Sendable {
    private let continuation: AsyncStream<String>.Continuation
    private let task: Mutex<Task<Void, Never>?>
    private let counts = Counts()

    /// Shared with the sending task, which outlives no `NoticeSender` method but needs the counts.
    private final class Counts: Sendable {
        let value = Mutex((pending: 0, dropped: 0))
        func withLock<T>(_ body: (inout (pending: Int, dropped: Int)) -> T) -> T { value.withLock { body(&$0) } }
    }

    init(http: any HTTPClient, clock: any AdClock, attempts: Int, timeout: Duration) {
        let (stream, continuation) = AsyncStream<String>.makeStream(bufferingPolicy: .bufferingOldest(10_000))
        self.continuation = continuation
        let counts = self.counts
        self.task = Mutex(
            Task {
                await withTaskGroup(of: Void.self) { group in
                    var running = 0
                    for await url in stream {
                        if running >= 8 {
                            await group.next()
                            running -= 1
                        }
                        running += 1
                        group.addTask {
                            await Self.deliver(url, http: http, clock: clock, attempts: attempts, timeout: timeout)
                            counts.withLock { $0.pending -= 1 }
                        }
                    }
                }
            })
    }

    /// Queues `url` (after macro substitution) unless it is nil or not an absolute http(s) URL.
    func send(_ url: String?, context: NoticeContext, _ values: NoticeValues) {
        guard let url else { return }
        let resolved = context.substitute(url, values)
        guard context.isFetchable(resolved) else { return }
        counts.withLock { $0.pending += 1 }
        switch continuation.yield(resolved) {
        case .enqueued: break
        case .dropped, .terminated:
            counts.withLock {
                $0.pending -= 1
                $0.dropped += 1
            }
        @unknown default:
            counts.withLock {
                $0.pending -= 1
                $0.dropped += 1
            }
        }
    }

    var pending: Int { counts.withLock { $0.pending } }
    var dropped: Int { counts.withLock { $0.dropped } }

    /// Ends the queue; the task sends what is queued and returns.
    func finish() { continuation.finish() }

    func shutdown() async {
        continuation.finish()
        let running = task.withLock { $0 }
        await running?.value
    }

    private static func deliver(
        _ url: String, http: any HTTPClient, clock: any AdClock, attempts: Int, timeout: Duration
    ) async {
        var backoff = Duration.milliseconds(250)
        for attempt in 1...attempts {
            let retry: Bool
            do {
                let response = try await http.send(HTTPRequest(url: url, timeout: timeout))
                retry = response.status >= 500
            } catch {
                retry = true
            }
            guard retry, attempt < attempts, !Task.isCancelled else { return }
            do { try await clock.sleep(until: clock.now + backoff) } catch { return }
            backoff = backoff * 2
        }
    }
}

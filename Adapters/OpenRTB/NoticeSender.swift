import AdMediation
import Synchronization

/// Sends win and loss notices in the background as a bounded service: at most ``Limits/queue`` notices wait, at most
/// ``Limits/concurrency`` are in flight, each attempt has a short timeout and all attempts of one notice together stay
/// within ``Limits/deadline`` (retries on transport errors and 5xx answers back off 250 ms, then doubling, on the
/// network's clock). A notice beyond the queue is dropped and counted, never waited for.
///
/// One task, owned by the ``BiddingNetwork`` and started by the first notice (nothing runs before there is something
/// to send): when the network is released it ends after sending what was queued;
/// ``shutdown()`` waits for that at most ``Limits/shutdownGrace`` on the network's clock, then cancels what is left
/// (counted as dropped). Nothing here ever holds a load's answer: ``send(_:context:_:)`` only queues.
final class NoticeSender: Sendable {
    /// The bounds of the service.
    struct Limits: Sendable {
        /// Attempts per notice (the first and its retries), 1…10.
        var attempts: Int
        /// The timeout of one attempt.
        var timeout: Duration
        /// All attempts of one notice together, backoffs included.
        var deadline: Duration
        /// Notices waiting to be sent, beyond those in flight.
        var queue: Int
        /// Notices in flight at once.
        var concurrency: Int
        /// How long ``NoticeSender/shutdown()`` lets the queue drain before cancelling it.
        var shutdownGrace: Duration
    }

    private let continuation: AsyncStream<String>.Continuation
    /// The sending task, started by the first notice (nothing starts in `init`); `finished` once the queue has ended
    /// (no task is started after that).
    private let task: Mutex<(running: Task<Void, Never>?, finished: Bool)>
    private let start: @Sendable () -> Task<Void, Never>
    private let counts = Counts()
    private let clock: any AdClock
    private let grace: Duration

    /// Shared with the sending task, which outlives no `NoticeSender` method but needs the counts.
    private final class Counts: Sendable {
        let value = Mutex((pending: 0, dropped: 0, failed: 0))
        func withLock<T>(_ body: (inout (pending: Int, dropped: Int, failed: Int)) -> T) -> T {
            value.withLock { body(&$0) }
        }
    }

    /// How one notice ended.
    private enum Outcome {
        /// Answered with a status below 500.
        case sent
        /// Given up: every attempt failed, or the deadline passed.
        case failed
        /// Cancelled by ``NoticeSender/shutdown()`` after the grace.
        case cancelled
    }

    init(http: any HTTPClient, clock: any AdClock, limits: Limits) {
        let (stream, continuation) = AsyncStream<String>.makeStream(
            bufferingPolicy: .bufferingOldest(max(1, limits.queue)))
        self.continuation = continuation
        self.clock = clock
        self.grace = limits.shutdownGrace
        let counts = self.counts
        let concurrency = max(1, limits.concurrency)
        self.task = Mutex((running: nil, finished: false))
        self.start = {
            Task {
                await withTaskGroup(of: Void.self) { group in
                    var running = 0
                    for await url in stream {
                        if Task.isCancelled { break }  // the stream would go on handing out what it buffered
                        if running >= concurrency {
                            await group.next()
                            running -= 1
                        }
                        running += 1
                        group.addTask {
                            let outcome = await Self.deliver(url, http: http, clock: clock, limits: limits)
                            counts.withLock {
                                $0.pending -= 1
                                if outcome == .cancelled { $0.dropped += 1 }
                                if outcome == .failed { $0.failed += 1 }
                            }
                        }
                    }
                }
                // Cancelled: what the stream still held was never sent.
                counts.withLock {
                    $0.dropped += $0.pending
                    $0.pending = 0
                }
            }
        }
    }

    /// Queues `url` (after macro substitution) unless it is nil or not an absolute http(s) URL; drops and counts it
    /// when the queue is full or the sender has been shut down.
    func send(_ url: String?, context: NoticeContext, _ values: NoticeValues) {
        guard let url else { return }
        let resolved = context.substitute(url, values)
        guard context.isFetchable(resolved) else { return }
        counts.withLock { $0.pending += 1 }
        task.withLock { state in
            if state.running == nil && !state.finished { state.running = start() }
        }
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

    /// Notices queued or in flight.
    var pending: Int { counts.withLock { $0.pending } }
    /// Notices never sent: the queue was full, the sender had been shut down, or the shutdown grace cut them off.
    var dropped: Int { counts.withLock { $0.dropped } }
    /// Notices given up after their attempts or their deadline.
    var failed: Int { counts.withLock { $0.failed } }

    /// Ends the queue; the task sends what is queued (each notice within its deadline) and returns.
    func finish() {
        task.withLock { $0.finished = true }
        continuation.finish()
    }

    /// Ends the queue and waits for it to drain, at most the shutdown grace on the network's clock; then cancels the
    /// notices left (queued and in flight), counts them as dropped and returns once the task has ended. Cancelling the
    /// caller ends the grace at once.
    func shutdown() async {
        let running = task.withLock { state in
            state.finished = true
            return state.running
        }
        continuation.finish()
        guard let running else { return }
        let clock = self.clock
        let deadline = clock.now + grace
        await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                await running.value
                return true
            }
            group.addTask {
                try? await clock.sleep(until: deadline)  // cancelled with the caller: the grace is over too
                return false
            }
            if await group.next() == false { running.cancel() }
            group.cancelAll()
        }
    }

    private static func deliver(_ url: String, http: any HTTPClient, clock: any AdClock, limits: Limits) async
        -> Outcome
    {
        let end = clock.now + limits.deadline
        var backoff = Duration.milliseconds(250)
        for attempt in 1...max(1, limits.attempts) {
            let left = end - clock.now
            guard left > .zero else { return .failed }
            let retry: Bool
            do {
                let response = try await http.send(HTTPRequest(url: url, timeout: min(limits.timeout, left)))
                retry = response.status >= 500
            } catch {
                if Task.isCancelled { return .cancelled }
                retry = true
            }
            guard retry else { return .sent }
            if Task.isCancelled { return .cancelled }
            guard attempt < limits.attempts, clock.now + backoff < end else { return .failed }
            do { try await clock.sleep(until: clock.now + backoff) } catch { return .cancelled }
            backoff = backoff * 2
        }
        return .failed
    }
}

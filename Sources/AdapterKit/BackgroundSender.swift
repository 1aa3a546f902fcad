import AdMediation
import AdTransport

/// Sends fire-and-forget pings (OpenRTB win, loss and billing notices; impression and click tracking) in the
/// background as a bounded service: at most ``Limits/queue`` pings wait, at most ``Limits/concurrency`` are in
/// flight, each attempt has a short timeout and all attempts of one ping together stay within ``Limits/deadline``
/// (retries on transport errors and 5xx answers back off 250 ms, then doubling, on the network's clock). A ping
/// beyond the queue is dropped and counted, never waited for.
///
/// One task, owned by the network and started by the first ping (nothing runs before there is something to send):
/// when the network is released it ends after sending what was queued; ``shutdown()`` waits for that at most
/// ``Limits/shutdownGrace`` on the network's clock, then cancels what is left (counted as dropped). Nothing here ever
/// holds a caller: ``send(_:through:)`` only queues.
public final class BackgroundSender: Sendable {
    /// Sends one request the network's way (which may sign it).
    public typealias Send = @Sendable (HTTPRequest) async throws -> HTTPResponse
    /// The bounds of the service.
    public struct Limits: Sendable {
        /// Attempts per ping (the first and its retries), 1…10.
        public var attempts: Int
        /// The timeout of one attempt.
        public var timeout: Duration
        /// All attempts of one ping together, backoffs included.
        public var deadline: Duration
        /// Pings waiting to be sent, beyond those in flight.
        public var queue: Int
        /// Pings in flight at once.
        public var concurrency: Int
        /// How long ``BackgroundSender/shutdown()`` lets the queue drain before cancelling it.
        public var shutdownGrace: Duration

        /// The bounds.
        public init(
            attempts: Int, timeout: Duration, deadline: Duration, queue: Int, concurrency: Int, shutdownGrace: Duration
        ) {
            self.attempts = max(1, min(attempts, 10))
            self.timeout = timeout
            self.deadline = deadline
            self.queue = max(1, min(queue, 100_000))
            self.concurrency = max(1, min(concurrency, 64))
            self.shutdownGrace = max(.zero, shutdownGrace)
        }

        /// Impression and click tracking: 4 attempts of 5 s within 30 s, 1 000 waiting, 4 at once, 2 s at shutdown.
        public static let tracking = Limits(
            attempts: 4, timeout: .seconds(5), deadline: .seconds(30), queue: 1000, concurrency: 4,
            shutdownGrace: .seconds(2))
    }

    /// One ping: its URL and how to send it.
    private struct Job: Sendable {
        let url: String
        let rule: DestinationRule
        let send: Send
    }

    private let continuation: AsyncStream<Job>.Continuation
    /// The sending task, started by the first ping (nothing starts in `init`); `finished` once the queue has ended
    /// (no task is started after that).
    private let task: LockedValue<(running: Task<Void, Never>?, finished: Bool)>
    private let start: @Sendable () -> Task<Void, Never>
    private let counts = Counts()
    private let clock: any AdClock
    private let grace: Duration

    /// Shared with the sending task, which outlives no `BackgroundSender` method but needs the counts.
    private final class Counts: Sendable {
        let value = LockedValue((pending: 0, dropped: 0, failed: 0))
        func withLock<T>(_ body: (inout (pending: Int, dropped: Int, failed: Int)) -> T) -> T {
            value.withLock { body(&$0) }
        }
    }

    /// How one ping ended.
    private enum Outcome {
        /// Answered with a status below 500.
        case sent
        /// Given up: every attempt failed, or the deadline passed.
        case failed
        /// Cancelled by ``BackgroundSender/shutdown()`` after the grace.
        case cancelled
    }

    /// A sender whose retries and shutdown grace run on `clock`.
    public init(clock: any AdClock, limits: Limits) {
        let (stream, continuation) = AsyncStream<Job>.makeStream(
            bufferingPolicy: .bufferingOldest(max(1, limits.queue)))
        self.continuation = continuation
        self.clock = clock
        self.grace = limits.shutdownGrace
        let counts = self.counts
        let concurrency = max(1, limits.concurrency)
        self.task = LockedValue((running: nil, finished: false))
        self.start = {
            Task {
                await withTaskGroup(of: Void.self) { group in
                    var running = 0
                    for await job in stream {
                        if Task.isCancelled { break }  // the stream would go on handing out what it buffered
                        if running >= concurrency {
                            await group.next()
                            running -= 1
                        }
                        running += 1
                        group.addTask {
                            let outcome = await Self.deliver(job, clock: clock, limits: limits)
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

    /// Queues a ping to `url`, sent with `send`; returns false (counted as dropped) when the queue is full or the
    /// sender has been shut down. The caller has checked the URL against its destination policy; each attempt's
    /// request carries `rule`, so the transport checks it again and at every redirect hop.
    @discardableResult
    public func send(_ url: String, meeting rule: DestinationRule, through send: @escaping Send) -> Bool {
        counts.withLock { $0.pending += 1 }
        task.withLock { state in
            if state.running == nil && !state.finished { state.running = start() }
        }
        switch continuation.yield(Job(url: url, rule: rule, send: send)) {
        case .enqueued:
            return true
        case .dropped, .terminated:
            counts.withLock {
                $0.pending -= 1
                $0.dropped += 1
            }
            return false
        @unknown default:
            counts.withLock {
                $0.pending -= 1
                $0.dropped += 1
            }
            return false
        }
    }

    /// Released: the queue ends, and the task sends what was queued and returns (the task holds the queue, not the
    /// sender).
    deinit { continuation.finish() }

    /// Pings queued or in flight.
    public var pending: Int { counts.withLock { $0.pending } }
    /// Pings never sent: the queue was full, the sender had been shut down, or the shutdown grace cut them off.
    public var dropped: Int { counts.withLock { $0.dropped } }
    /// Pings given up after their attempts or their deadline.
    public var failed: Int { counts.withLock { $0.failed } }

    /// Ends the queue; the task sends what is queued (each ping within its deadline) and returns.
    public func finish() {
        task.withLock { $0.finished = true }
        continuation.finish()
    }

    /// Ends the queue and waits for it to drain, at most the shutdown grace on the network's clock; then cancels the
    /// pings left (queued and in flight), counts them as dropped and returns once the task has ended. Cancelling the
    /// caller ends the grace at once.
    public func shutdown() async {
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

    private static func deliver(_ job: Job, clock: any AdClock, limits: Limits) async -> Outcome {
        let end = clock.now + limits.deadline
        var backoff = Duration.milliseconds(250)
        for attempt in 1...max(1, limits.attempts) {
            let left = end - clock.now
            guard left > .zero else { return .failed }
            let retry: Bool
            do {
                var request = HTTPRequest(url: job.url, timeout: min(limits.timeout, left))
                request.destination = job.rule
                let response = try await job.send(request)
                retry = response.status >= 500
            } catch {
                if Task.isCancelled { return .cancelled }
                retry = true
            }
            guard retry else { return .sent }  // 2xx, or a refusal (4xx) a retry would not change
            if Task.isCancelled { return .cancelled }
            guard attempt < limits.attempts, clock.now + backoff < end else { return .failed }
            do { try await clock.sleep(until: clock.now + backoff) } catch { return .cancelled }
            backoff = backoff * 2
        }
        return .failed
    }
}

/// A one-shot signal a background job waits on (a click's ping waits for its ad's impression ping to have been
/// attempted, so a tracker sees them in order). Waiting ends when it fires or the waiting task is cancelled.
package final class OnceSignal: Sendable {
    private let state = LockedValue<(fired: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    /// A signal not fired yet.
    package init() {}

    /// A signal that has already fired (waiting on it returns at once).
    package static var fired: OnceSignal {
        let signal = OnceSignal()
        signal.fire()
        return signal
    }

    /// Fires the signal and wakes every waiter. Idempotent.
    package func fire() {
        let waiters = state.withLock { s -> [CheckedContinuation<Void, Never>] in
            if s.fired { return [] }
            s.fired = true
            defer { s.waiters = [] }
            return s.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Waits until the signal fires or the current task is cancelled (which ends every wait on it).
    package func wait() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let fired = state.withLock { s -> Bool in
                    if s.fired { return true }
                    s.waiters.append(continuation)
                    return false
                }
                if fired { continuation.resume() }
            }
        } onCancel: {
            fire()
        }
    }
}

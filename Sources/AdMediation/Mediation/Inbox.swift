/// The inbox of one request: answers, ticks and the caller's cancellation, read in order by one reader (the driver,
/// then the background owner). Posting never blocks; reading suspends only when nothing is there.
struct Inbox: Sendable {
    private struct State {
        var buffer: [Mediator.Input] = []
        var head = 0
        var waiter: CheckedContinuation<Mediator.Input, Never>?
        /// Set when the request was decided: nothing is read any more.
        var closedAt: AdInstant?

        mutating func pop() -> Mediator.Input? {
            guard head < buffer.count else { return nil }
            let input = buffer[head]
            head += 1
            if head == buffer.count {
                buffer.removeAll(keepingCapacity: true)
                head = 0
            }
            return input
        }
    }

    private let state = LockedValue(State())

    /// Posts `input`, waking the reader if it waits. Returns nil, or, when the inbox was closed (the request was
    /// decided), the instant it closed: nothing was posted, the sender handles its own input.
    func send(_ input: Mediator.Input) -> AdInstant? {
        let (waiter, closedAt) = state.withLock { s -> (CheckedContinuation<Mediator.Input, Never>?, AdInstant?) in
            if let closedAt = s.closedAt { return (nil, closedAt) }
            if let waiter = s.waiter {
                s.waiter = nil
                return (waiter, nil)
            }
            s.buffer.append(input)
            return (nil, nil)
        }
        waiter?.resume(returning: input)
        return closedAt
    }

    /// Closes the inbox at `instant` (the decision) and returns what was posted and not read.
    func close(at instant: AdInstant) -> [Mediator.Input] {
        state.withLock { s in
            s.closedAt = instant
            defer {
                s.buffer = []
                s.head = 0
            }
            return Array(s.buffer[s.head...])
        }
    }

    /// The next input when one is ready, without waiting.
    func poll() -> Mediator.Input? { state.withLock { $0.pop() } }

    /// The next input, waiting for it when none is there (one reader at a time).
    func next() async -> Mediator.Input {
        if let ready = state.withLock({ $0.pop() }) { return ready }
        return await withCheckedContinuation { continuation in
            let ready = state.withLock { s -> Mediator.Input? in
                if let ready = s.pop() { return ready }
                s.waiter = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }
}

/// The loads a mediator stopped waiting for: cancelled at their request's decision and not returned yet. Each
/// handles its own late answer when it returns (``Mediator/lateAnswer(_:slot:network:placement:cancelledAt:)``); this
/// counts them (``Mediator/backgroundLoadCount``) and lets ``Mediator/shutdown()`` wait for them, within its grace.
final class BackgroundLoads: Sendable {
    private struct State {
        var count = 0
        var nextWaiter = 0
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
    }

    private let state = LockedValue(State())

    /// `count` more loads run on after their decision.
    func add(_ count: Int) { state.withLock { $0.count += count } }

    /// One of them returned.
    func done() {
        let waiters = state.withLock { s -> [CheckedContinuation<Void, Never>] in
            s.count = max(0, s.count - 1)
            guard s.count == 0 else { return [] }
            defer { s.waiters = [:] }
            return Array(s.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// The loads still running after their decision.
    var count: Int { state.withLock { $0.count } }

    /// Returns once none runs, or when the waiting task is cancelled.
    func drained() async {
        let id = state.withLock { s in
            defer { s.nextWaiter += 1 }
            return s.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let done = state.withLock { s -> Bool in
                    if s.count == 0 || Task.isCancelled { return true }
                    s.waiters[id] = continuation
                    return false
                }
                if done { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }
}

import AdMediation

/// A clock that moves only when told to. Sleepers wake, in deadline order, when ``advance(by:)`` passes
/// their deadline. Use ``waitForSleepers(_:)`` to know a driver has reached its sleep before advancing.
public final class ManualAdClock: AdClock {
    private struct Sleeper {
        let id: UInt64
        let deadline: AdInstant
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now: AdInstant
        var nextID: UInt64 = 0
        var sleepers: [Sleeper] = []
        var waiters: [(id: UInt64, count: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let state: LockedValue<State>

    /// Creates a clock at `start`.
    public init(start: AdInstant = .zero) {
        state = LockedValue(State(now: start))
    }

    /// The current instant.
    public var now: AdInstant { state.withLock { $0.now } }

    /// The number of tasks sleeping on this clock.
    public var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    /// Suspends until the clock is advanced to `deadline` (returns at once if it already has).
    public func sleep(until deadline: AdInstant) async throws {
        let id: UInt64 = state.withLock { s in
            s.nextID += 1
            return s.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let action: (() -> Void)? = state.withLock { s in
                    if Task.isCancelled { return { continuation.resume(throwing: CancellationError()) } }
                    if deadline <= s.now { return { continuation.resume() } }
                    s.sleepers.append(Sleeper(id: id, deadline: deadline, continuation: continuation))
                    return Self.readyWaiters(&s)
                }
                action?()
            }
        } onCancel: {
            let sleeper: Sleeper? = state.withLock { s in
                guard let index = s.sleepers.firstIndex(where: { $0.id == id }) else { return nil }
                return s.sleepers.remove(at: index)
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves the clock forward by `duration`, waking every sleeper whose deadline has come, earliest first.
    public func advance(by duration: Duration) async {
        await advance(to: now + duration)
    }

    /// Moves the clock forward to `instant` (never backwards), waking due sleepers in deadline order and
    /// letting each woken task run before the next deadline is considered.
    public func advance(to instant: AdInstant) async {
        while true {
            let next: Sleeper? = state.withLock { s in
                let due = s.sleepers.enumerated().filter { $0.element.deadline <= instant }
                guard let first = due.min(by: { $0.element.deadline < $1.element.deadline }) else {
                    if instant > s.now { s.now = instant }
                    return nil
                }
                s.sleepers.remove(at: first.offset)
                if first.element.deadline > s.now { s.now = first.element.deadline }
                return first.element
            }
            guard let next else { break }
            next.continuation.resume()
            await Self.settle()
        }
        await Self.settle()
    }

    /// Waits until at least `count` tasks are sleeping on this clock, or until the calling task is cancelled (so a
    /// test's time limit ends a wait that would never be satisfied).
    public func waitForSleepers(_ count: Int = 1) async {
        let id: UInt64 = state.withLock { s in
            s.nextID += 1
            return s.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready: Bool = state.withLock { s in
                    if s.sleepers.count >= count || Task.isCancelled { return true }
                    s.waiters.append((id, count, continuation))
                    return false
                }
                if ready { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { s -> CheckedContinuation<Void, Never>? in
                guard let index = s.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return s.waiters.remove(at: index).continuation
            }
            waiter?.resume()
        }
    }

    private static func readyWaiters(_ s: inout State) -> (() -> Void)? {
        let count = s.sleepers.count
        let ready = s.waiters.filter { $0.count <= count }
        guard !ready.isEmpty else { return nil }
        s.waiters.removeAll { $0.count <= count }
        return { for waiter in ready { waiter.continuation.resume() } }
    }

    /// Gives woken tasks a chance to run before the clock moves on.
    private static func settle() async {
        for _ in 0..<20 { await Task.yield() }
    }
}

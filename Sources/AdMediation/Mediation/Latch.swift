import Synchronization

/// A one-shot signal: waiting ends when the latch fires or the waiting task is cancelled. Firing is idempotent.
final class Latch: Sendable {
    private struct State {
        var fired = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())

    /// Fires the latch and wakes every waiter.
    func fire() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            if state.fired { return [] }
            state.fired = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Waits until the latch fires or the current task is cancelled (which fires it).
    func wait() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let firedAlready = state.withLock { state -> Bool in
                    if state.fired { return true }
                    state.waiters.append(continuation)
                    return false
                }
                if firedAlready { continuation.resume() }
            }
        } onCancel: {
            fire()
        }
    }
}

/// Cancels one child of a task group from outside it. ``run(_:)`` runs its body in a task group of its own, beside a
/// watcher waiting on a ``Latch``: ``cancel()`` fires the latch, the watcher returns and the group cancels the body
/// (now, or at once when it has not started yet). No task handle is stored or touched from outside its task.
final class ChildCancellation: Sendable {
    private let latch = Latch()

    /// Runs `body` in a child task that ``cancel()`` cancels, and returns its result (the body always finishes: a
    /// cancelled body returns what it returns on cancellation).
    func run<T: Sendable>(_ body: @escaping @Sendable () async -> T) async -> T {
        await withTaskGroup(of: T?.self, returning: T.self) { group in
            group.addTask { await body() }
            group.addTask { [latch] in
                await latch.wait()
                return nil
            }
            var value: T?
            for await next in group {
                // Whichever ends first, the other is cancelled: the watcher stops waiting, the body is cancelled.
                if let next { value = next }
                group.cancelAll()
            }
            guard let value else { preconditionFailure("the body's child task always returns a value") }
            return value
        }
    }

    /// Cancels the body of ``run(_:)`` (now, or as soon as it starts). Idempotent.
    func cancel() { latch.fire() }
}

/// How many answers a task group's children have finished, read by the group's owner to tell whether its next
/// `next()` has an answer ready.
final class AnswerCount: Sendable {
    private let count = Atomic<Int>(0)

    /// Counts one finished answer.
    func add() { count.add(1, ordering: .releasing) }

    /// The answers finished so far.
    var value: Int { count.load(ordering: .acquiring) }
}

/// A value behind its own lock, as a class so that tables of them can be built once and read without a lock.
final class Guarded<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>

    init(_ value: Value) { mutex = Mutex(value) }

    /// Runs `body` with the value, under the lock.
    func withLock<Result: Sendable>(_ body: (inout Value) -> Result) -> Result {
        mutex.withLock { value in body(&value) }
    }
}

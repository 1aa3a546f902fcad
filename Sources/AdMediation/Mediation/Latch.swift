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

/// Cancels one child of a task group from outside it, without an extra task: the child registers its own task while
/// it runs, and ``cancel()`` cancels that task (or, if it has not registered yet, makes it cancel itself on
/// registering).
final class ChildCancellation: Sendable {
    // `UnsafeCurrentTask` may only be used while its task is alive. It is stored only between `run`'s registration
    // and the end of `run` (the child task is running throughout), and read only under the same lock, so `cancel()`
    // never touches a task that has finished.
    private struct State: @unchecked Sendable {
        var task: UnsafeCurrentTask?
        var cancelled = false
    }

    private let state = Mutex(State())

    /// Runs `body` in the current task, which ``cancel()`` then cancels.
    func run<T>(_ body: () async -> T) async -> T {
        enter()
        let result = await body()
        leave()
        return result
    }

    /// Registers the current task, which ``cancel()`` then cancels until ``leave()``.
    func enter() {
        withUnsafeCurrentTask { task in
            state.withLock { state in
                if state.cancelled { task?.cancel() } else { state.task = task }
            }
        }
    }

    /// Unregisters the task ``enter()`` registered; called by that task before it ends.
    func leave() {
        state.withLock { $0.task = nil }
    }

    /// Cancels the task running ``run(_:)`` (now, or as soon as it registers).
    func cancel() {
        state.withLock { state in
            state.cancelled = true
            state.task?.cancel()
            state.task = nil
        }
    }
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

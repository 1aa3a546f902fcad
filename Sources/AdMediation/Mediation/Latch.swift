import Synchronization

/// A one-shot signal that lets a parent stop one child of a task group (Swift cancels a group's children only all
/// at once). Firing is idempotent; waiting ends when the latch fires or the waiting task is cancelled.
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

    /// Runs `operation` as a child task and cancels it when the latch fires first; always waits for it and returns
    /// its result (a cancelled operation's late answer is still returned, so the caller can release what it holds).
    /// Fires the latch when the operation ends.
    func race<T: Sendable>(_ operation: @escaping @Sendable () async throws -> T) async -> Result<T, any Error> {
        await withTaskGroup(of: Result<T, any Error>?.self) { group in
            group.addTask {
                do { return .success(try await operation()) } catch { return .failure(error) }
            }
            group.addTask {
                await self.wait()
                return nil
            }
            var outcome: Result<T, any Error>?
            while let next = await group.next() {
                if let next {
                    outcome = next
                    fire()
                } else {
                    group.cancelAll()
                }
            }
            return outcome ?? .failure(CancellationError())
        }
    }
}

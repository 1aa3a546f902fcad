/// A value behind its own lock, as a class so that tables of them can be built once and read without a lock.
final class Guarded<Value: Sendable>: Sendable {
    private let mutex: LockedValue<Value>

    init(_ value: Value) { mutex = LockedValue(value) }

    /// Runs `body` with the value, under the lock.
    func withLock<Result: Sendable>(_ body: (inout Value) -> Result) -> Result {
        mutex.withLock { value in body(&value) }
    }
}

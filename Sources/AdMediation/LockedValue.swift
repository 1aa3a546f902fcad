// The project's one lock: a value behind a lock that ThreadSanitizer can see. Swift's `Synchronization.Mutex` locks
// with futex system calls on Linux, which ThreadSanitizer does not intercept, so under it every access made inside a
// `Mutex` looks unsynchronised. This lock is a `pthread_mutex_t` on Linux (intercepted by ThreadSanitizer, as
// swift-nio's `NIOLock` is) and an `os_unfair_lock` on Apple platforms (intercepted there too). Everything in the
// project that needs a lock uses this type, with the call shape of `Mutex` (`withLock { value in … }`).

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Android)
    import Android
#else
    import Synchronization
#endif

// `@unchecked Sendable` is safe: the value is reached only through `withLock`, which holds the lock for the whole
// access, and it goes in and comes out only as `sending` (the contract that makes `Synchronization.Mutex` Sendable);
// the lock pointer is set once in `init` and freed only in `deinit`.
/// A value behind a lock that ThreadSanitizer can see, with the call shape of `Synchronization.Mutex`
/// (`LockedValue(initial)`, `withLock { value in … }`). Public so that an adapter, a tool or a test outside this
/// package locks as the library does and stays visible to ThreadSanitizer.
///
/// The lock is a `pthread_mutex_t` on Linux and an `os_unfair_lock` on Apple platforms; ThreadSanitizer intercepts
/// both, so it sees the happens-before edge between two holders of the same lock (it sees none through
/// `Synchronization.Mutex`, whose Linux implementation calls futex directly). The lock is not recursive: calling
/// `withLock` on the same value from inside `body` deadlocks, as with `Mutex`. Keep `body` short and never suspend
/// or wait inside it.
///
/// A class, where `Mutex` is a noncopyable struct: the lock sits in an allocation of its own that never moves in
/// memory, which both primitives require, and a closure can capture the lock like any reference.
public final class LockedValue<Value>: @unchecked Sendable {
    private var value: Value
    private let lock: UnsafeMutablePointer<LockPrimitive>

    /// A lock holding `initialValue`.
    public init(_ initialValue: consuming sending Value) {
        value = initialValue
        lock = UnsafeMutablePointer.allocate(capacity: 1)
        #if canImport(Darwin)
            lock.initialize(to: os_unfair_lock())
        #elseif canImport(Glibc) || canImport(Musl) || canImport(Android)
            lock.initialize(to: pthread_mutex_t())
            let error = pthread_mutex_init(lock, nil)
            precondition(error == 0, "pthread_mutex_init failed: \(error)")
        #else
            lock.initialize(to: Synchronization.Mutex(()))
        #endif
    }

    deinit {
        #if !canImport(Darwin) && (canImport(Glibc) || canImport(Musl) || canImport(Android))
            let error = pthread_mutex_destroy(lock)
            precondition(error == 0, "pthread_mutex_destroy failed: \(error)")
        #endif
        lock.deinitialize(count: 1)
        lock.deallocate()
    }

    /// Runs `body` with the value, holding the lock for the whole call, and returns what `body` returns.
    public func withLock<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        #if canImport(Darwin)
            os_unfair_lock_lock(lock)
            defer { os_unfair_lock_unlock(lock) }
            return try body(&value)
        #elseif canImport(Glibc) || canImport(Musl) || canImport(Android)
            let error = pthread_mutex_lock(lock)
            precondition(error == 0, "pthread_mutex_lock failed: \(error)")
            defer {
                let error = pthread_mutex_unlock(lock)
                precondition(error == 0, "pthread_mutex_unlock failed: \(error)")
            }
            return try body(&value)
        #else
            return try lock.pointee.withLock { _ throws(E) -> sending Result in try body(&value) }
        #endif
    }
}

/// The platform's lock: `os_unfair_lock` on Apple platforms, `pthread_mutex_t` on Linux, and elsewhere the standard
/// library's `Mutex` (no ThreadSanitizer there).
#if canImport(Darwin)
    typealias LockPrimitive = os_unfair_lock
#elseif canImport(Glibc) || canImport(Musl) || canImport(Android)
    typealias LockPrimitive = pthread_mutex_t
#else
    typealias LockPrimitive = Synchronization.Mutex<Void>
#endif

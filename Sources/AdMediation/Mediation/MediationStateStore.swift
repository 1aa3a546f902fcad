import Foundation

/// Where a mediator keeps what it learned across launches (the self-ordering waterfall's statistics). `AdStorage`'s
/// `SQLiteStateStore` is the durable one; ``InMemoryStateStore`` keeps state for one process. Implementations must
/// not block the calling task (do file I/O on their own queue).
public protocol MediationStateStore: Sendable {
    /// The value saved under `key`, or nil. Throws ``AdError/Code/storage`` when the store cannot be read.
    func load(key: String) async throws(AdError) -> Data?
    /// Saves `data` under `key`, replacing the previous value. Throws ``AdError/Code/storage`` on failure.
    func save(_ data: Data, key: String) async throws(AdError)
}

/// A ``MediationStateStore`` in memory, for one process (tests, short-lived tools).
public final class InMemoryStateStore: MediationStateStore {
    private let values = LockedValue<[String: Data]>([:])

    /// Creates an empty store.
    public init() {}

    /// The value under `key`.
    public func load(key: String) async throws(AdError) -> Data? { values.withLock { $0[key] } }

    /// Replaces the value under `key`.
    public func save(_ data: Data, key: String) async throws(AdError) { values.withLock { $0[key] = data } }
}

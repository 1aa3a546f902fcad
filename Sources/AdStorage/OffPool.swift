import Foundation

/// Runs blocking file work (opening a SQLite file, creating a directory) on a Dispatch thread instead of the
/// cooperative pool: the caller suspends while the disk works, and no pool thread is held.
package func offCooperativePool<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        DispatchQueue.global(qos: .utility).async { continuation.resume(returning: work()) }
    }
}

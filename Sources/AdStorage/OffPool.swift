import Foundation

/// Runs blocking file work (opening a SQLite file, creating a directory) on a thread of its own instead of the
/// cooperative pool: the caller suspends while the disk works, and no pool thread is held. Not Dispatch's global
/// queues either: they are as narrow as the machine's cores, so slow opens (a SQLite file syncs several times) would
/// queue behind each other and hold back every other user of those queues. For rare work only (each store opens once).
package func offCooperativePool<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        let thread = Thread { continuation.resume(returning: work()) }
        thread.name = "AdStorage.open"
        thread.start()
    }
}

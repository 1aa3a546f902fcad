import Dispatch
import Foundation
import Synchronization

/// Ctrl-C for a long run (issue 33 item 3): the first SIGINT asks the run to stop starting requests, so it can report
/// what it did (marked partial), write `--output` and exit 130; a second SIGINT exits 130 at once.
///
/// The signal is read with a `DispatchSource` (the process ignores SIGINT's default action while one is watched), so
/// the handler runs on a dispatch queue, not in a signal context: it may print and take locks.
final class Interruption: Sendable {
    private let requested = Atomic<Bool>(false)
    /// The signal source, kept alive for the process's life. `DispatchSourceSignal` is not declared `Sendable`; it is
    /// set once in `init` and only read afterwards (to keep it alive), and libdispatch sources are thread-safe.
    private nonisolated(unsafe) let source: any DispatchSourceSignal

    /// True once SIGINT arrived.
    var isRequested: Bool { requested.load(ordering: .acquiring) }

    /// Starts watching SIGINT; `onFirst` runs (on a dispatch queue) when the first one arrives.
    init(onFirst: @escaping @Sendable () -> Void) {
        signal(SIGINT, SIG_IGN)
        source = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
        source.setEventHandler { [weak self] in
            guard let self else { return }
            if self.requested.exchange(true, ordering: .acquiringAndReleasing) {
                FileHandle.standardError.write(Data("\ninterrupted again: exiting now\n".utf8))
                _exit(130)
            }
            onFirst()
        }
        source.resume()
    }
}

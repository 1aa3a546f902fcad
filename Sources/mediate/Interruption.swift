import Dispatch
import Foundation
import Synchronization

/// Ctrl-C for a long run (issue 33 item 3), and the other signals that end a run alike (issue 45: SIGTERM from a CI
/// runner or `timeout`, SIGHUP from a closed terminal): the first asks the run to stop starting requests, so it can
/// report what it did (marked partial), write `--output` and exit 130; a second exits 130 at once.
///
/// The signals are read with `DispatchSource`s (the process ignores their default action while they are watched), so
/// the handler runs on a dispatch queue, not in a signal context: it may print and take locks.
final class Interruption: Sendable {
    /// The signals handled.
    static let signals: [Int32] = [SIGINT, SIGTERM, SIGHUP]
    private let requested = Atomic<Bool>(false)
    /// The signal sources, kept alive for the process's life. `DispatchSourceSignal` is not declared `Sendable`; they
    /// are set once in `init` and only read afterwards (to keep them alive), and libdispatch sources are thread-safe.
    private nonisolated(unsafe) let sources: [any DispatchSourceSignal]

    /// True once one of the signals arrived.
    var isRequested: Bool { requested.load(ordering: .acquiring) }

    /// Starts watching the signals; `onFirst` runs (on a dispatch queue) when the first one arrives.
    init(onFirst: @escaping @Sendable () -> Void) {
        var sources: [any DispatchSourceSignal] = []
        for number in Self.signals {
            signal(number, SIG_IGN)
            sources.append(DispatchSource.makeSignalSource(signal: number, queue: .global()))
        }
        self.sources = sources
        for source in sources {
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
}

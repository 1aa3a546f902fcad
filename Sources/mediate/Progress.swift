import Foundation
import MediateKit
import Synchronization

/// Progress lines on stderr (results go to stdout). Quiet when `enabled` is false.
struct Progress: Sendable {
    var enabled: Bool

    func say(_ text: String) {
        guard enabled else { return }
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }
}

/// Counts finished requests and prints a line every 10 %.
final class ProgressCounter: Sendable {
    private let state = Mutex<(done: Int, lastDecile: Int)>((0, 0))
    private let total: Int
    private let label: String
    private let progress: Progress
    private let start = ContinuousClock.now

    init(total: Int, label: String, progress: Progress) {
        self.total = total
        self.label = label
        self.progress = progress
    }

    func tick() {
        let decile: Int? = state.withLock { s in
            s.done += 1
            let d = s.done * 10 / max(1, total)
            guard d > s.lastDecile, d < 10 else { return nil }
            s.lastDecile = d
            return d
        }
        if let decile { progress.say("  \(label): \(decile * 10)%") }
    }

    func finish() {
        let seconds = (ContinuousClock.now - start).seconds
        progress.say(String(format: "  %@: %d requests in %.2f s", label, total, seconds))
    }
}

/// Writes `text` to stderr as one line, its control characters escaped (text from outside cannot drive the terminal).
func warn(_ text: String) {
    FileHandle.standardError.write(Data((TerminalText.escaped(text) + "\n").utf8))
}

import AdMediation
import Foundation
import MediateKit

/// Progress on stderr (results go to stdout). Quiet when `enabled` is false. `live` (stderr is a terminal, unless
/// `--progress plain`): each phase has one line, redrawn in place; otherwise (a pipe, a CI log) a phase prints one
/// line when it ends and, while it runs, at most one line every `interval`.
struct Progress: Sendable {
    var enabled: Bool
    var live = false
    var interval: Duration = .seconds(10)

    /// A progress that redraws in place when stderr is a terminal and `plain` is false.
    static func forStderr(enabled: Bool, plain: Bool, interval: Duration) -> Progress {
        Progress(enabled: enabled, live: !plain && isatty(STDERR_FILENO) == 1, interval: interval)
    }

    func say(_ text: String) {
        guard enabled else { return }
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }

    /// Writes `text` without a newline, over the current line (a terminal only).
    func redraw(_ text: String) {
        guard enabled else { return }
        FileHandle.standardError.write(Data(("\r\u{1B}[K" + text).utf8))
    }
}

/// Counts one phase's finished requests and reports them: `phase 3 of 19 · home_tile (waterfall) · 42 % ·
/// 1 234 req/s · ETA 12 s` while it runs (redrawn at most 10 times a second on a terminal, at most every
/// ``Progress/interval`` elsewhere), and `phase 3 of 19 · home_tile (waterfall) · 200 requests in 0.52 s ·
/// 385 req/s` when it ends.
final class ProgressCounter: Sendable {
    private struct State {
        var done = 0
        var lastShown: ContinuousClock.Instant
    }
    private let state: LockedValue<State>
    private let total: Int
    private let label: String
    private let progress: Progress
    private let start = ContinuousClock.now

    init(total: Int, label: String, phase: (index: Int, count: Int)? = nil, progress: Progress) {
        self.total = total
        self.label = phase.map { "phase \($0.index) of \($0.count) · " + label } ?? label
        self.progress = progress
        state = LockedValue(State(lastShown: start))
    }

    func tick() {
        guard progress.enabled else { return }
        let now = ContinuousClock.now
        let every = progress.live ? Duration.milliseconds(100) : progress.interval
        let done: Int? = state.withLock { s in
            s.done += 1
            guard now - s.lastShown >= every, s.done < total else { return nil }
            s.lastShown = now
            return s.done
        }
        guard let done else { return }
        let elapsed = (now - start).seconds
        let rate = elapsed > 0 ? Double(done) / elapsed : 0
        var text = "\(label) · \(done * 100 / max(1, total)) % · \(Self.grouped(Int(rate.rounded()))) req/s"
        if rate > 0 { text += " · ETA \(Self.duration(Double(total - done) / rate))" }
        if progress.live { progress.redraw(text) } else { progress.say(text) }
    }

    /// The phase's last line; `interrupted`: it stopped early.
    func finish(interrupted: Bool = false) {
        guard progress.enabled else { return }
        let done = state.withLock { $0.done }
        let seconds = (ContinuousClock.now - start).seconds
        let rate = seconds > 0 ? Double(done) / seconds : 0
        var text =
            "\(label) · \(Self.grouped(done)) requests in \(String(format: "%.2f", seconds)) s · "
            + "\(Self.grouped(Int(rate.rounded()))) req/s"
        if interrupted { text += " · interrupted after \(Self.grouped(done)) of \(Self.grouped(total))" }
        if progress.live { progress.redraw(text + "\n") } else { progress.say(text) }
    }

    /// `1234567` as `1 234 567`.
    static func grouped(_ value: Int) -> String {
        let digits = String(value.magnitude)
        var result = ""
        for (offset, digit) in digits.enumerated() {
            if offset > 0, (digits.count - offset) % 3 == 0 { result += " " }
            result.append(digit)
        }
        return value < 0 ? "-" + result : result
    }

    /// `12 s`, `3 min 05 s`, `1 h 02 min`.
    static func duration(_ seconds: Double) -> String {
        guard seconds.isFinite else { return "?" }
        let whole = Int(min(seconds.rounded(.up), 359_999))
        if whole < 60 { return "\(whole) s" }
        if whole < 3600 { return String(format: "%d min %02d s", whole / 60, whole % 60) }
        return String(format: "%d h %02d min", whole / 3600, whole % 3600 / 60)
    }
}

/// Writes `text` to stderr as one line, its control characters escaped (text from outside cannot drive the terminal).
func warn(_ text: String) {
    FileHandle.standardError.write(Data((TerminalText.escaped(text) + "\n").utf8))
}

import AdMediation
import Foundation
import MediateKit
import Synchronization

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

    /// Writes `text` without a newline, over the current line (a terminal only): cut to the terminal's width less
    /// one column, so the terminal never wraps it (a wrapped line is not redrawn by `\r`: it leaves debris).
    /// `newline`: end the line (a phase's last one stays on screen).
    func redraw(_ text: String, newline: Bool = false) {
        guard enabled else { return }
        let line = Self.fitted(text, to: Self.terminalWidth())
        FileHandle.standardError.write(Data(("\r\u{1B}[K" + line + (newline ? "\n" : "")).utf8))
    }

    /// `text` in at most `width - 1` characters, its end replaced by `…` when cut.
    static func fitted(_ text: String, to width: Int) -> String {
        let room = max(1, width - 1)
        guard text.count > room else { return text }
        return String(text.prefix(room - 1)) + "…"
    }

    /// The terminal's width in columns: `COLUMNS` when set to a positive number (as Python's
    /// `shutil.get_terminal_size` reads it first), else the width of the terminal on stderr (`TIOCGWINSZ`), else 80.
    static func terminalWidth(environment: [String: String] = ProcessInfo.processInfo.environment) -> Int {
        if let text = environment["COLUMNS"], let columns = Int(text), columns > 0 { return min(columns, 10_000) }
        var size = winsize()
        if ioctl(STDERR_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 { return Int(size.ws_col) }
        return 80
    }
}

/// The whole run's progress, shared by its phases' counters: the overall ETA a live line shows (issue 47 item 2: a
/// 20 000-request run took ~30 min unannounced).
final class RunProgress: Sendable {
    private let done = Atomic<Int>(0)
    private let planned: Int
    private let start: ContinuousClock.Instant

    /// A run of `planned` requests in all, started at `start` (now by default; a test gives its own instant).
    init(planned: Int, start: ContinuousClock.Instant = .now) {
        self.planned = planned
        self.start = start
    }

    /// One more request of the run finished.
    func tick() { done.add(1, ordering: .relaxed) }

    /// `run ETA 3 min 05 s` from the run's rate so far; nil before the first request or at the end.
    func eta(now: ContinuousClock.Instant) -> String? {
        let done = self.done.load(ordering: .relaxed)
        let elapsed = (now - start).seconds
        guard done > 0, done < planned, elapsed > 0 else { return nil }
        let rate = Double(done) / elapsed
        return "run ETA \(ProgressCounter.duration(Double(planned - done) / rate))"
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
    /// `phase 3 of 19`, when the counter is one phase of several.
    private let phase: String?
    /// The phase's own label (`home_tile (waterfall)`).
    private let name: String
    /// The whole run, for the overall ETA on a live line.
    private let run: RunProgress?

    init(
        total: Int, label: String, phase: (index: Int, count: Int)? = nil, progress: Progress, run: RunProgress? = nil
    ) {
        self.total = total
        self.label = phase.map { "phase \($0.index) of \($0.count) · " + label } ?? label
        self.phase = phase.map { "phase \($0.index) of \($0.count)" }
        name = label
        self.run = run
        self.progress = progress
        state = LockedValue(State(lastShown: start))
    }

    func tick() {
        run?.tick()
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
        let percent = "\(done * 100 / max(1, total)) %"
        let eta = rate > 0 ? "ETA \(Self.duration(Double(total - done) / rate))" : nil
        guard progress.live else {
            progress.say(
                [label, percent, "\(Self.grouped(Int(rate.rounded()))) req/s"].joined(separator: " · ")
                    + (eta.map { " · " + $0 } ?? ""))
            return
        }
        // Live: the figures first and the phase's name last, so a narrow terminal cuts the name, not the ETA.
        let parts = [phase, percent, eta, run?.eta(now: now), "\(Self.grouped(Int(rate.rounded()))) req/s", name]
        progress.redraw(parts.compactMap { $0 }.joined(separator: " · "))
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
        if progress.live { progress.redraw(text, newline: true) } else { progress.say(text) }
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

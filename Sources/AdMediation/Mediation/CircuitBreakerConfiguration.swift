/// Rests a network after repeated failures. No fill is not a failure.
public struct CircuitBreakerConfiguration: Sendable, Hashable {
    /// Consecutive failures (errors or timeouts) that open the breaker. Default 5.
    public var failureThreshold: Int
    /// How long an open breaker rests before one half-open probe. Default 30 s (JSON `cool_down_s`).
    public var coolDown: Duration

    /// Creates breaker settings.
    public init(failureThreshold: Int = 5, coolDown: Duration = .seconds(30)) {
        self.failureThreshold = failureThreshold
        self.coolDown = coolDown
    }

    /// Every problem of the breaker's settings at `path`.
    func problems(path: String) -> [String] {
        var problems: [String] = []
        if !(1...10_000).contains(failureThreshold) {
            problems.append("\(path).failure_threshold: must be 1…10000, got \(failureThreshold)")
        }
        if let problem = Limits.secondsProblem(coolDown, field: "\(path).cool_down_s", zeroAllowed: true) {
            problems.append(problem)
        }
        return problems
    }
}

/// The ranges every number of the configuration must fall in (validation names the field and the range; the file
/// format refuses a number out of them at its field while decoding).
package enum Limits {
    /// Deadlines and timeouts: at most 10 minutes.
    package static let maxMilliseconds = 600_000
    /// Windows, intervals and cool-downs: at most 7 days.
    package static let maxSeconds: Double = 7 * 24 * 3600
    /// Floors: at most 1 000 000 per mille.
    static let maxEcpm: Double = 1_000_000

    /// `must be 0…604800` or `must be over 0 and at most 604800`.
    package static func secondsRange(zeroAllowed: Bool) -> String {
        zeroAllowed ? "must be 0…\(Int(maxSeconds))" : "must be over 0 and at most \(Int(maxSeconds))"
    }

    /// The problem of `duration` unless it is 1 ms…10 min, naming `field` (a `_ms` field) and the value in
    /// milliseconds; nil when it is in range.
    static func millisecondsProblem(_ duration: Duration, field: String) -> String? {
        guard duration >= .milliseconds(1) && duration <= .milliseconds(maxMilliseconds) else {
            return "\(field): must be 1…\(maxMilliseconds), got \(duration.milliseconds)"
        }
        return nil
    }

    /// The problem of `duration` unless it is within 0 (excluded unless `zeroAllowed`)…7 days, naming `field` (a
    /// `_s` field); nil when it is in range.
    static func secondsProblem(_ duration: Duration, field: String, zeroAllowed: Bool) -> String? {
        let low = zeroAllowed ? duration >= .zero : duration > .zero
        guard low && duration <= .seconds(maxSeconds) else {
            return "\(field): \(secondsRange(zeroAllowed: zeroAllowed)), got \(duration.seconds)"
        }
        return nil
    }

    /// The most problems an error lists (the file format's `ConfigurationProblems.limit` is this).
    package static let maxProblemsListed = 20

    /// `problems` as an error lists them: the first ``maxProblemsListed``, then `… and 5 more problems`.
    package static func listed(_ problems: [String], total: Int? = nil) -> [String] {
        let shown = Array(problems.prefix(maxProblemsListed))
        let total = max(total ?? problems.count, shown.count)
        return total > shown.count ? shown + ["… and \(total - shown.count) more problems"] : shown
    }
}

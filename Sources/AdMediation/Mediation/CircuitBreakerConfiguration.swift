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

    func validate(path: String) throws(AdError) {
        if !(1...10_000).contains(failureThreshold) {
            throw AdError(.configuration, "\(path).failure_threshold: must be 1…10000, got \(failureThreshold)")
        }
        try Limits.checkSeconds(coolDown, field: "\(path).cool_down_s", zeroAllowed: true)
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

    /// Throws unless `duration` is 1 ms…10 min, naming `field` (a `_ms` field) and the value in milliseconds.
    static func checkMilliseconds(_ duration: Duration, field: String) throws(AdError) {
        guard duration >= .milliseconds(1) && duration <= .milliseconds(maxMilliseconds) else {
            throw AdError(.configuration, "\(field): must be 1…\(maxMilliseconds), got \(duration.milliseconds)")
        }
    }

    /// Throws unless `duration` is within 0 (excluded unless `zeroAllowed`)…7 days, naming `field` (a `_s` field).
    static func checkSeconds(_ duration: Duration, field: String, zeroAllowed: Bool) throws(AdError) {
        let low = zeroAllowed ? duration >= .zero : duration > .zero
        guard low && duration <= .seconds(maxSeconds) else {
            throw AdError(
                .configuration, "\(field): \(secondsRange(zeroAllowed: zeroAllowed)), got \(duration.seconds)")
        }
    }
}

// Durations as numbers, for outside values (`OutsideValue`), logs, metrics and reports: every module of the project
// reads them the same way.

extension Duration {
    /// The duration in whole nanoseconds, clamped to `Int64`.
    public var nanosecondsClamped: Int64 {
        let (seconds, attoseconds) = components
        let (ns, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds < 0 ? .min : .max }
        return ns &+ attoseconds / 1_000_000_000
    }

    /// The duration in (fractional) milliseconds.
    public var milliseconds: Double { Double(nanosecondsClamped) / 1e6 }

    /// The duration in (fractional) seconds.
    public var seconds: Double { Double(nanosecondsClamped) / 1e9 }
}

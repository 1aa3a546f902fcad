import AdNetworkConformance

/// How late this machine runs work right now, measured rather than assumed (the conformance kit's
/// ``AdNetworkConformance/measureSchedulerSlack(samples:)``). Wall-clock bounds in tests are the contract's figure plus
/// a multiple of this slack: on an idle machine the slack is well under a millisecond and the bound is the
/// contract's; under load (a parallel `swift test` on two cores) it grows with the measured lateness, so a test
/// fails on the code under test, not on the scheduler.
public enum SchedulerSlack {
    /// Measures the slack before and after `body` and returns the body's value with the larger of the two (load that
    /// arrives during the measurement shows in the second).
    public static func around<T>(_ body: () async throws -> T) async rethrows -> (value: T, slack: Duration) {
        let before = await AdNetworkConformance.measureSchedulerSlack()
        let value = try await body()
        let after = await AdNetworkConformance.measureSchedulerSlack()
        return (value, max(before, after))
    }
}

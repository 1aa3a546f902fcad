import AdMediation
import AdMediationTesting

/// Advances `clock` by `total` in one-second steps, letting the tasks woken at each step run.
public func advanceInSteps(_ clock: ManualAdClock, _ total: Duration) async {
    var left = total
    while left > .zero {
        await clock.advance(by: .seconds(1))
        for _ in 0..<5 { await Task.yield() }
        left -= .seconds(1)
    }
}

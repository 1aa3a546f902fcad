import AdMediation
import AdMediationTesting

/// Advances `clock` by `total` in steps of `step`, letting the tasks woken at each step run. A test that shows
/// "nothing happens for five minutes" first checks that the timers it expects gone are gone from the clock
/// (``ManualAdClock/sleeperCount``): the steps then only give any timer left a chance to fire, and a few large steps
/// (a refresh or batch interval) do that as well as hundreds of one-second ones, without hundreds of scheduler turns
/// on a busy machine.
public func advanceInSteps(_ clock: ManualAdClock, _ total: Duration, step: Duration = .seconds(1)) async {
    var left = total
    while left > .zero {
        let next = min(step, left)
        await clock.advance(by: next)
        for _ in 0..<5 { await Task.yield() }
        left -= next
    }
}

/// Polls `condition` until it holds; false if `seconds` of real time pass first. The wait ends at the event itself,
/// so the bound is a hang guard far above what any scenario needs on a loaded machine, never a measure.
public func pollUntil(within seconds: Int = 30, _ condition: () async -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .seconds(seconds)
    while ContinuousClock.now < deadline {
        if await condition() { return true }
        try? await Task.sleep(for: .milliseconds(2))
    }
    return await condition()
}

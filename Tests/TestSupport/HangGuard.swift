/// Real-time limits for tests over loopback servers, curl and the demand sandbox. A scenario there needs
/// milliseconds on an idle machine, but a developer's busy machine or a shared CI runner (the plain suite beside two
/// CPU-bound processes: `scripts/suite-under-load.sh`) can stretch it to seconds. These limits only keep a broken test
/// from hanging: they sit far above need, and the tests assert outcomes, never the time taken. A rule that needs a
/// time bound belongs in TimingTests.
public enum HangGuard {
    /// A request's or a line's timeout against a live loopback server or sandbox: 30 s.
    public static let request: Duration = .seconds(30)
    /// A wait for one event or one task to end (polling, or a driver of an injected clock): 90 s, under the suites'
    /// 2-minute time limits.
    public static let wait: Duration = .seconds(90)
}

extension HangGuard {
    /// Polls `condition` every 10 ms until it holds, for at most ``wait``; whether it held. For work a test waits
    /// for (callbacks sent in the background, a task's end): the wait ends at the event, the bound only at a hang.
    @discardableResult
    public static func until(_ condition: () async -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + wait
        while ContinuousClock.now < deadline {
            if await condition() { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return await condition()
    }
}

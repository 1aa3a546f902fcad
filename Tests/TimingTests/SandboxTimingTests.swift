import DemandSandbox
import Testing

/// The sandbox's wall-clock promises (issue 46: wall-clock bounds live only in TimingTests).
@Suite("Sandbox timing", .timeLimit(.minutes(1)))
struct SandboxTimingTests {
    /// Starting on a port in use fails at once: it does not wait for the port to free. The bound is far above the
    /// failure's own time (milliseconds) and far below a retry loop's.
    @Test func startingOnAPortInUseFailsWithinTenSeconds() async throws {
        let first = try await DemandSandbox.start()
        var configuration = SandboxConfiguration()
        configuration.port = first.port
        let started = ContinuousClock.now
        let second = try? await DemandSandbox.start(configuration: configuration)
        let elapsed = ContinuousClock.now - started
        if let second { await second.shutdown() }
        #expect(second == nil, "a second sandbox started on port \(first.port)")
        #expect(elapsed < .seconds(10), "it failed instead of waiting")
        await first.shutdown()
    }
}

import Synchronization

/// A point in time on an ``AdClock``, in nanoseconds since the clock's own origin.
public struct AdInstant: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    /// Nanoseconds since the clock's origin.
    public var nanoseconds: Int64

    /// Creates an instant.
    public init(nanoseconds: Int64) { self.nanoseconds = nanoseconds }

    /// The clock's origin.
    public static let zero = AdInstant(nanoseconds: 0)

    /// Orders instants.
    public static func < (lhs: AdInstant, rhs: AdInstant) -> Bool { lhs.nanoseconds < rhs.nanoseconds }

    /// The instant `duration` later; saturates at the end of time (a caller's `.seconds(Int64.max)` is "very far",
    /// never a wrap into the past).
    public static func + (lhs: AdInstant, rhs: Duration) -> AdInstant {
        let (sum, overflow) = lhs.nanoseconds.addingReportingOverflow(rhs.nanosecondsClamped)
        return AdInstant(nanoseconds: overflow ? (rhs > .zero ? .max : .min) : sum)
    }

    /// The instant `duration` earlier; saturates like ``+(_:_:)``.
    public static func - (lhs: AdInstant, rhs: Duration) -> AdInstant {
        let (difference, overflow) = lhs.nanoseconds.subtractingReportingOverflow(rhs.nanosecondsClamped)
        return AdInstant(nanoseconds: overflow ? (rhs > .zero ? .min : .max) : difference)
    }

    /// The time from `rhs` to `lhs`.
    public static func - (lhs: AdInstant, rhs: AdInstant) -> Duration {
        .nanoseconds(lhs.nanoseconds &- rhs.nanoseconds)
    }

    /// `"12.345s"`.
    public var description: String { "\(Double(nanoseconds) / 1e9)s" }
}

/// The time source of everything time-dependent in this project. Production uses ``SystemAdClock``; tests
/// use `ManualAdClock` (in `AdMediationTesting`) and advance it instead of sleeping.
public protocol AdClock: Sendable {
    /// The current instant.
    var now: AdInstant { get }
    /// Suspends until `deadline`; throws `CancellationError` when the task is cancelled.
    func sleep(until deadline: AdInstant) async throws
}

extension AdClock {
    /// Suspends for `duration`.
    public func sleep(for duration: Duration) async throws {
        try await sleep(until: now + duration)
    }
}

/// The monotonic system clock.
public struct SystemAdClock: AdClock {
    /// The origin, on `ContinuousClock` and on the clock it reads (`CLOCK_BOOTTIME` on Linux), taken together so that
    /// `now` and `sleep(until:)` agree.
    private static let origin = (instant: ContinuousClock.now, nanoseconds: bootNanoseconds())

    /// Creates the system clock.
    public init() {}

    /// The current monotonic instant: the clock `ContinuousClock` reads, read directly (the platform shim), in whole
    /// nanoseconds, without its 128-bit `Duration` arithmetic on every call.
    public var now: AdInstant {
        AdInstant(nanoseconds: Self.bootNanoseconds() &- Self.origin.nanoseconds)
    }

    private static func bootNanoseconds() -> Int64 { Platform.continuousNanoseconds() }

    /// Sleeps on `ContinuousClock`.
    public func sleep(until deadline: AdInstant) async throws {
        // No tolerance: with none given, the system timer may fire up to a tenth of the interval late (libdispatch's
        // default leeway), and a decision's deadline is a promise to the caller.
        try await ContinuousClock().sleep(
            until: Self.origin.instant + .nanoseconds(deadline.nanoseconds), tolerance: .zero)
    }
}

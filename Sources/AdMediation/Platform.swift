// The platform shim: the one place in the portable modules (everything an app links) that calls an operating
// system API directly, with a branch per platform. `scripts/check-portable.sh` allows Linux-only APIs here only.

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Operating-system calls of the portable modules, one branch per platform.
enum Platform {
    /// Nanoseconds of the monotonic clock that keeps counting while the device sleeps, the clock `ContinuousClock`
    /// reads: `CLOCK_BOOTTIME` on Linux, `CLOCK_MONOTONIC_RAW` (`clock_gettime_nsec_np`) on Apple platforms, and
    /// `ContinuousClock` itself elsewhere. Read directly, it costs no 128-bit `Duration` arithmetic per call.
    static func continuousNanoseconds() -> Int64 {
        #if os(Linux) || os(Android)
            var time = timespec()
            clock_gettime(CLOCK_BOOTTIME, &time)
            return Int64(time.tv_sec) &* 1_000_000_000 &+ Int64(time.tv_nsec)
        #elseif canImport(Darwin)
            return Int64(clamping: clock_gettime_nsec_np(CLOCK_MONOTONIC_RAW))
        #else
            return (ContinuousClock.now - fallbackOrigin).nanosecondsClamped
        #endif
    }

    #if !os(Linux) && !os(Android) && !canImport(Darwin)
        private static let fallbackOrigin = ContinuousClock.now
    #endif
}

/// A per-network circuit breaker: closed → open after `threshold` consecutive failures → half-open after the
/// cool-down (one probe at a time) → closed on the probe's success, open again on its failure.
public struct CircuitBreaker: Sendable, Hashable {
    /// The breaker's state.
    public enum State: Sendable, Hashable {
        /// Requests pass; `failures` consecutive failures so far.
        case closed(failures: Int)
        /// Requests are skipped until `until`.
        case open(until: AdInstant)
        /// One probe may pass; `probing` while it runs.
        case halfOpen(probing: Bool)
    }

    /// Whether a request may go to the network.
    public enum Admission: Sendable, Hashable {
        /// Closed: go ahead.
        case allowed
        /// Half-open: go ahead as the single probe.
        case probe
        /// Open, or a probe is already running: skip.
        case rejected
    }

    /// The current state.
    public private(set) var state: State = .closed(failures: 0)
    let threshold: Int
    let coolDown: Duration

    /// Creates a closed breaker.
    public init(threshold: Int, coolDown: Duration) {
        self.threshold = threshold
        self.coolDown = coolDown
    }

    /// Asks to send a request at `now`.
    public mutating func admit(at now: AdInstant) -> Admission {
        switch state {
        case .closed:
            return .allowed
        case .open(let until):
            guard now >= until else { return .rejected }
            state = .halfOpen(probing: true)
            return .probe
        case .halfOpen(let probing):
            if probing { return .rejected }
            state = .halfOpen(probing: true)
            return .probe
        }
    }

    /// Records an answer that is not a failure (fill or no fill). `probe` says whether the request was admitted as
    /// the half-open probe: while half-open only the probe's answer counts, and answers of requests admitted before
    /// the breaker opened are ignored while it is open, so a stale answer never lets a second probe through.
    public mutating func recordSuccess(probe: Bool) {
        switch state {
        case .closed: state = .closed(failures: 0)
        case .halfOpen: if probe { state = .closed(failures: 0) }
        case .open: break
        }
    }

    /// Records a failure (error or timeout) at `now`; see ``recordSuccess(probe:)`` for `probe`.
    public mutating func recordFailure(at now: AdInstant, probe: Bool) {
        switch state {
        case .closed(let failures):
            state = failures + 1 >= threshold ? .open(until: now + coolDown) : .closed(failures: failures + 1)
        case .halfOpen:
            if probe { state = .open(until: now + coolDown) }
        case .open:
            break
        }
    }

    /// Records that an admitted request ended without an answer (cancelled): when it was the half-open probe, the
    /// probe slot is free again.
    public mutating func recordAbandoned(probe: Bool) {
        if probe, case .halfOpen = state { state = .halfOpen(probing: false) }
    }
}

/// The decision logic of one mediated request, as a value type driven by inputs with explicit times.
///
/// Rules: a line wins only once every line above it has answered no fill, failed, timed out or been skipped;
/// lines below a fill can never win and are cancelled (or never started); at most `maxInFlight` lines run at
/// once; a line times out at `min(start + its timeout, the request's deadline)`; a fill under the line's floor or
/// already expired is treated as no fill and invalidated; any answer that arrives after its line was settled is
/// dropped and its ad invalidated.
struct WaterfallStateMachine: Sendable {
    struct LineSpec: Sendable {
        var floor: Double?
        var timeout: Duration
    }

    enum BreakerEvent: Sendable, Equatable {
        case success, failure, abandoned
    }

    enum Action: Sendable {
        /// Start loading line `i` (the driver may answer with ``skip(_:reason:at:)`` when its breaker is open).
        case start(Int)
        /// Cancel the running load of line `i`.
        case cancel(Int)
        /// Invalidate an ad that will never be delivered.
        case invalidate(LoadedAd)
        /// Feed the network's breaker of line `i`.
        case breaker(Int, BreakerEvent)
        /// The request is decided; read ``winner``.
        case finish
    }

    private enum Line: Sendable {
        case pending
        case running(started: AdInstant, deadline: AdInstant)
        case filled(LoadedAd, latency: Duration)
        case done(LineOutcome, latency: Duration?, ecpm: Double?)
    }

    private let specs: [LineSpec]
    private let maxInFlight: Int
    private let startedAt: AdInstant
    private let deadline: AdInstant
    private var lines: [Line]
    private(set) var isFinished = false
    private(set) var winnerIndex: Int?
    private(set) var finishedAt: AdInstant?

    init(lines specs: [LineSpec], maxInFlight: Int, startedAt: AdInstant, deadline: AdInstant) {
        self.specs = specs
        self.maxInFlight = max(1, maxInFlight)
        self.startedAt = startedAt
        self.deadline = deadline
        self.lines = Array(repeating: .pending, count: specs.count)
    }

    /// The winning ad, once finished with a winner.
    var winner: LoadedAd? {
        guard let winnerIndex, case .filled(let ad, _) = lines[winnerIndex] else { return nil }
        return ad
    }

    /// The next instant at which ``advance(to:)`` has work: the earliest running line's deadline.
    var nextWakeUp: AdInstant? {
        guard !isFinished else { return nil }
        var next: AdInstant? = nil
        for case .running(_, let lineDeadline) in lines {
            next = min(next ?? lineDeadline, lineDeadline)
        }
        return next
    }

    /// Starts the first lines (none when the deadline has already passed: the request is then decided at once).
    mutating func begin(at now: AdInstant) -> [Action] { collect { $0.begin(at: now, into: &$1) } }

    /// ``begin(at:)``, appending its actions to `actions` (the driver reuses one buffer for every step).
    mutating func begin(at now: AdInstant, into actions: inout [Action]) {
        if now >= deadline { return advance(to: now, into: &actions) }
        evaluate(at: now, into: &actions)
    }

    /// Line `index` was not started (breaker open, capped, …).
    mutating func skip(_ index: Int, reason: SkipReason, at now: AdInstant) -> [Action] {
        collect { $0.skip(index, reason: reason, at: now, into: &$1) }
    }

    /// ``skip(_:reason:at:)``, appending its actions to `actions`.
    mutating func skip(_ index: Int, reason: SkipReason, at now: AdInstant, into actions: inout [Action]) {
        if case .running = lines[index] {
            lines[index] = .done(.skipped(reason), latency: nil, ecpm: nil)
        } else if case .pending = lines[index] {
            lines[index] = .done(.skipped(reason), latency: nil, ecpm: nil)
        }
        evaluate(at: now, into: &actions)
    }

    /// Line `index` answered.
    mutating func answer(_ index: Int, _ result: Result<AdLoadResult, AdError>, at now: AdInstant) -> [Action] {
        collect { $0.answer(index, result, at: now, into: &$1) }
    }

    /// ``answer(_:_:at:)``, appending its actions to `actions`.
    mutating func answer(
        _ index: Int, _ result: Result<AdLoadResult, AdError>, at now: AdInstant, into actions: inout [Action]
    ) {
        guard case .running(let started, _) = lines[index], !isFinished else {
            // A late answer: the line was already settled. Never deliver it.
            if case .success(.filled(let ad)) = result { actions.append(.invalidate(ad)) }
            return
        }
        let latency = now - started
        switch result {
        case .success(.filled(let ad)):
            actions.append(.breaker(index, .success))
            if ad.isExpired(at: now) {
                lines[index] = .done(.skipped(.expired), latency: latency, ecpm: ad.ecpm)
                actions.append(.invalidate(ad))
            } else if let floor = specs[index].floor, let price = ad.ecpm, price < floor {
                lines[index] = .done(.skipped(.belowFloor), latency: latency, ecpm: price)
                actions.append(.invalidate(ad))
            } else {
                lines[index] = .filled(ad, latency: latency)
            }
        case .success(.noFill(let noFill)):
            actions.append(.breaker(index, .success))
            lines[index] = .done(.noFill(reason: noFill.reason), latency: latency, ecpm: nil)
        case .failure(let error):
            switch error.code {
            case .timeout:
                actions.append(.breaker(index, .failure))
                lines[index] = .done(.timeout, latency: latency, ecpm: nil)
            case .cancelled:
                actions.append(.breaker(index, .abandoned))
                lines[index] = .done(.skipped(.cancelled), latency: latency, ecpm: nil)
            default:
                actions.append(.breaker(index, .failure))
                lines[index] = .done(.error(error), latency: latency, ecpm: nil)
            }
        }
        evaluate(at: now, into: &actions)
    }

    /// Time moved to `now`: lines past their deadline time out.
    mutating func advance(to now: AdInstant) -> [Action] { collect { $0.advance(to: now, into: &$1) } }

    /// ``advance(to:)``, appending its actions to `actions`.
    mutating func advance(to now: AdInstant, into actions: inout [Action]) {
        guard !isFinished else { return }
        for index in lines.indices {
            if case .running(let started, let lineDeadline) = lines[index], lineDeadline <= now {
                lines[index] = .done(.timeout, latency: now - started, ecpm: nil)
                actions.append(.cancel(index))
                actions.append(.breaker(index, .failure))
            }
        }
        if now >= deadline {
            for index in lines.indices {
                if case .pending = lines[index] { lines[index] = .done(.skipped(.notReached), latency: nil, ecpm: nil) }
            }
        }
        evaluate(at: now, into: &actions)
    }

    /// The caller gave up: cancel everything, no winner.
    mutating func cancelAll(at now: AdInstant) -> [Action] { collect { $0.cancelAll(at: now, into: &$1) } }

    /// ``cancelAll(at:)``, appending its actions to `actions`.
    mutating func cancelAll(at now: AdInstant, into actions: inout [Action]) {
        guard !isFinished else { return }
        for index in lines.indices {
            switch lines[index] {
            case .pending:
                lines[index] = .done(.skipped(.notReached), latency: nil, ecpm: nil)
            case .running(let started, _):
                lines[index] = .done(.skipped(.cancelled), latency: now - started, ecpm: nil)
                actions.append(.cancel(index))
                actions.append(.breaker(index, .abandoned))
            case .filled(let ad, let latency):
                lines[index] = .done(.skipped(.cancelled), latency: latency, ecpm: ad.ecpm)
                actions.append(.invalidate(ad))
            case .done:
                break
            }
        }
        isFinished = true
        finishedAt = now
        actions.append(.finish)
    }

    /// The actions of one step, in a new array.
    private mutating func collect(_ step: (inout Self, inout [Action]) -> Void) -> [Action] {
        var actions: [Action] = []
        step(&self, &actions)
        return actions
    }

    /// The trace so far (complete once finished).
    func trace(placement: String, lines lineIDs: [(network: String, placement: String)], at now: AdInstant)
        -> MediationTrace
    {
        let traced = lines.indices.map { index -> LineTrace in
            let (line, id) = (lines[index], lineIDs[index])
            switch line {
            case .pending:
                return LineTrace(
                    network: id.network, placement: id.placement, outcome: .skipped(.notReached), latency: nil,
                    ecpm: nil)
            case .running(let started, _):
                return LineTrace(
                    network: id.network, placement: id.placement, outcome: .skipped(.cancelled), latency: now - started,
                    ecpm: nil)
            case .filled(let ad, let latency):
                return LineTrace(
                    network: id.network, placement: id.placement, outcome: .fill, latency: latency, ecpm: ad.ecpm)
            case .done(let outcome, let latency, let ecpm):
                return LineTrace(
                    network: id.network, placement: id.placement, outcome: outcome, latency: latency, ecpm: ecpm)
            }
        }
        return MediationTrace(
            placement: placement, lines: traced, winnerIndex: winnerIndex, duration: (finishedAt ?? now) - startedAt)
    }

    private mutating func evaluate(at now: AdInstant, into actions: inout [Action]) {
        guard !isFinished else { return }
        // 1. Decide, if every line above the first fill is settled.
        var firstFill: Int?
        var undecided = false
        for index in lines.indices {
            switch lines[index] {
            case .filled:
                firstFill = index
            case .pending, .running:
                undecided = true
            case .done:
                continue
            }
            break
        }
        if let winner = firstFill, !undecided {
            settleBelow(winner, at: now, into: &actions)
            winnerIndex = winner
            finish(at: now, into: &actions)
            return
        }
        if !undecided && firstFill == nil {
            finish(at: now, into: &actions)
            return
        }
        // 2. Lines below any fill can never win: cancel or never start them.
        if let fill = lines.firstIndex(where: { if case .filled = $0 { true } else { false } }) {
            settleBelow(fill, at: now, into: &actions)
        }
        // 3. Start pending lines up to the in-flight bound (not past the deadline).
        guard now < deadline else { return }
        var running = lines.count(where: { if case .running = $0 { true } else { false } })
        for index in lines.indices where running < maxInFlight {
            if case .filled = lines[index] { break }
            guard case .pending = lines[index] else { continue }
            lines[index] = .running(started: now, deadline: min(now + specs[index].timeout, deadline))
            actions.append(.start(index))
            running += 1
        }
    }

    /// Settles every line below `index`: running lines are cancelled, fills are outranked, pending lines never start.
    private mutating func settleBelow(_ index: Int, at now: AdInstant, into actions: inout [Action]) {
        for below in lines.indices where below > index {
            switch lines[below] {
            case .pending:
                lines[below] = .done(.skipped(.notReached), latency: nil, ecpm: nil)
            case .running(let started, _):
                lines[below] = .done(.skipped(.cancelled), latency: now - started, ecpm: nil)
                actions.append(.cancel(below))
                actions.append(.breaker(below, .abandoned))
            case .filled(let ad, let latency):
                lines[below] = .done(.skipped(.outranked), latency: latency, ecpm: ad.ecpm)
                actions.append(.invalidate(ad))
            case .done:
                break
            }
        }
    }

    private mutating func finish(at now: AdInstant, into actions: inout [Action]) {
        isFinished = true
        finishedAt = now
        actions.append(.finish)
    }
}

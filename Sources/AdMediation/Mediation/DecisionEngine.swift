/// The whole decision of one mediated request as a value type driven by events with explicit times, returning actions
/// for its driver (``Mediator``) to execute. No task, clock or lock inside, so every rule is testable without I/O.
///
/// One index space: slots `0..<bidders` are the placement's bidders, then one slot per waterfall line in configured
/// order. The modes are one machine: a plain waterfall (no bidders), the unified auction (bidders first, then the lines
/// priced above the best valid bid) and the self-ordering waterfall (lines tried in the optimizer's `order`).
///
/// Rules: pacing or a frequency cap decides at once (no fill, every line skipped). Bidders are asked together; the
/// bidding ends when every bidder has answered or at the latest bidder deadline, where those still running time out.
/// In the waterfall a line wins only once every line above it has answered no fill, failed, timed out or been
/// skipped; lines below a fill can never win and are cancelled (or never started); at most `maxInFlight` lines run at
/// once; a line times out at `min(start + its timeout, the request's deadline)`. Every answer is screened in one place
/// (``screen(_:floor:requiresPrice:at:)``): an expired fill, a bid without a finite price, or a fill under its floor is
/// refused and invalidated (a refused bid is settled lost with its reason first). At the end the highest price wins:
/// a bid beats the line that won the waterfall only when strictly higher. An answer that arrives after its slot was
/// settled is dropped and its ad invalidated (a bid's settled lost first).
struct DecisionEngine: Sendable {
    private enum Phase: Sendable {
        case idle, bidding, waterfall, finished
    }

    enum State: Sendable {
        case pending
        case running(started: AdInstant, deadline: AdInstant)
        /// A valid fill: for a line, a candidate of the waterfall; for a bidder, a valid bid.
        case filled(LoadedAd, latency: Duration)
        case done(LineOutcome, latency: Duration?, ecpm: Double?)
    }

    let slots: [Slot]
    let startedAt: AdInstant
    let deadline: AdInstant
    /// Slots `0..<bidderCount` are bidders.
    let bidderCount: Int
    private let maxInFlight: Int
    /// How the placement's auction clears (announced to its bidders).
    let auction: AuctionType
    let abLabel: String?
    /// The engine runs as a line of an outer decider (a nested mediator): its winner's auction result is the outer
    /// decision's to settle, once, so the winner is never told it won an auction it may still lose.
    let defersWinnerSettlement: Bool
    /// Configured line indexes in the order the waterfall tries them.
    let order: [Int]
    /// Why pacing or the cap blocked the request, if it did.
    let blocked: SkipReason?
    var states: [State]
    private var phase = Phase.idle
    /// The instant the bidding ends at the latest (the latest deadline of a started bidder).
    private var biddingEnds: AdInstant?
    /// The waterfall's slots, in the order tried (lines priced at or under the best bid left out).
    private var waterfall: [Int] = []
    /// Valid bids, best first: price descending, then configured order.
    var bids: [(slot: Int, ad: LoadedAd, price: Double)] = []
    /// Each bidder's auction result, as traced.
    var auctions: [AuctionResult?]
    var callerCancelled = false
    /// The configured index of the line that won the waterfall, if one did.
    private(set) var winnerIndex: Int?
    var decision: Decision?
    private(set) var finishedAt: AdInstant?

    /// A request for `placement` starting at `now`: its deadline is the placement's (1 ms to 10 min) or the request's
    /// own `timeout` when shorter. `order` is the self-ordering waterfall's order (nil: the configured one); `blocked`
    /// is why pacing or the frequency cap refuses the request, which decides it at once.
    init(
        placement: PlacementConfiguration, order: [Int]? = nil, blocked: SkipReason? = nil, startedAt now: AdInstant,
        timeout: Duration? = nil, nested: Bool = false, slots: [Slot]? = nil
    ) {
        defersWinnerSettlement = nested
        self.slots = slots ?? Self.slots(of: placement)
        bidderCount = placement.bidders.count
        startedAt = now
        var deadline =
            now + min(max(placement.deadline, .milliseconds(1)), .milliseconds(Limits.maxMilliseconds))
        if let timeout { deadline = min(deadline, now + timeout) }
        self.deadline = deadline
        maxInFlight = max(1, placement.mode == .sequential ? 1 : placement.maxInFlight)
        auction = placement.auction
        abLabel = placement.abLabel
        self.order = order ?? Array(placement.lines.indices)
        self.blocked = blocked
        // Appended, not `Array(repeating:count:)`, whose unspecialized buffer looks the storage's generic metadata
        // up on every call.
        var states: [State] = []
        states.reserveCapacity(self.slots.count)
        for _ in self.slots.indices { states.append(.pending) }
        self.states = states
        var auctions: [AuctionResult?] = []
        auctions.reserveCapacity(bidderCount)
        for _ in 0..<bidderCount { auctions.append(nil) }
        self.auctions = auctions
        if let blocked {
            phase = .finished
            finishedAt = now
            decision = .noFill(blocked.rawValue)
        }
    }

    /// The slots of `placement`: its bidders, then its lines in configured order (``PlacementPlan`` keeps them).
    static func slots(of placement: PlacementConfiguration) -> [Slot] {
        var slots: [Slot] = []
        slots.reserveCapacity(placement.bidders.count + placement.lines.count)
        for (index, bidder) in placement.bidders.enumerated() {
            slots.append(
                Slot(
                    role: .bidder(index), network: bidder.network, placement: bidder.placement,
                    floor: bidder.floorEcpm, timeout: bidder.timeout))
        }
        for (index, line) in placement.lines.enumerated() {
            slots.append(
                Slot(
                    role: .line(index), network: line.network, placement: line.placement, floor: line.floorEcpm,
                    timeout: line.timeout, ecpm: line.ecpm))
        }
        return slots
    }

    /// The request is decided.
    var isFinished: Bool { phase == .finished }

    /// The next instant at which ``advance(to:into:)`` has work: the bidding's end while bidding, else the earliest
    /// running line's deadline.
    var nextWakeUp: AdInstant? {
        switch phase {
        case .idle, .finished:
            return nil
        case .bidding:
            return biddingEnds
        case .waterfall:
            var next: AdInstant? = nil
            for slot in waterfall {
                if case .running(_, let lineDeadline) = states[slot] { next = min(next ?? lineDeadline, lineDeadline) }
            }
            return next
        }
    }

    /// The slot of the line at configured index `index`.
    func lineSlot(_ index: Int) -> Int { bidderCount + index }

    // MARK: Events

    /// Starts the request: every bidder at once, or the waterfall when there are none (nothing is started when the
    /// deadline has already passed: the request is then decided at once).
    mutating func begin(at now: AdInstant, into actions: inout [Action]) {
        guard phase == .idle else { return }
        guard bidderCount > 0 else { return startWaterfall(at: now, into: &actions) }
        phase = .bidding
        for slot in 0..<bidderCount {
            guard now < deadline else {
                states[slot] = .done(.skipped(.notReached), latency: nil, ecpm: nil)
                continue
            }
            let slotDeadline = min(now + slots[slot].timeout, deadline)
            states[slot] = .running(started: now, deadline: slotDeadline)
            biddingEnds = max(biddingEnds ?? slotDeadline, slotDeadline)
            actions.append(.start(slot))
        }
        endBiddingIfDone(at: now, into: &actions)
    }

    /// Slot `slot` was not started (its breaker is open).
    mutating func skip(_ slot: Int, reason: SkipReason, at now: AdInstant, into actions: inout [Action]) {
        switch states[slot] {
        case .pending, .running: states[slot] = .done(.skipped(reason), latency: nil, ecpm: nil)
        case .filled, .done: return
        }
        progress(at: now, into: &actions)
    }

    /// Slot `slot` answered.
    mutating func answer(
        _ slot: Int, _ result: Result<AdLoadResult, AdError>, at now: AdInstant, into actions: inout [Action]
    ) {
        guard case .running(let started, _) = states[slot], phase != .finished else {
            // A late answer: the slot was already settled. Never deliver it.
            if case .success(.filled(let ad)) = result { refuse(ad, slot: slot, .internalError, into: &actions) }
            return
        }
        let latency = now - started
        switch result {
        case .success(.filled(let ad)):
            actions.append(.breaker(slot, .success))
            let isBid = slot < bidderCount
            if let (outcome, reason) = Self.screen(ad, floor: slots[slot].floor, requiresPrice: isBid, at: now) {
                states[slot] = .done(outcome, latency: latency, ecpm: ad.ecpm)
                if isBid { auctions[slot] = .lost(reason: reason, winningPrice: nil) }
                refuse(ad, slot: slot, reason, into: &actions)
            } else {
                states[slot] = .filled(ad, latency: latency)
            }
        case .success(.noFill(let noFill)):
            actions.append(.breaker(slot, .success))
            states[slot] = .done(.noFill(reason: noFill.reason), latency: latency, ecpm: nil)
        case .failure(let error):
            let (outcome, event): (LineOutcome, BreakerEvent) =
                switch error.code {
                case .timeout: (.timeout, .failure)
                case .cancelled: (.skipped(.cancelled), .abandoned)
                default: (.error(error), .failure)
                }
            actions.append(.breaker(slot, event))
            states[slot] = .done(outcome, latency: latency, ecpm: nil)
        }
        progress(at: now, into: &actions)
    }

    /// Time moved to `now`: the bidding ends at its latest deadline, lines past their deadline time out.
    mutating func advance(to now: AdInstant, into actions: inout [Action]) {
        switch phase {
        case .idle, .finished:
            return
        case .bidding:
            guard let biddingEnds, now >= biddingEnds else { return }
            for slot in 0..<bidderCount { timeOut(slot, at: now, into: &actions) }
            endBiddingIfDone(at: now, into: &actions)
        case .waterfall:
            for slot in waterfall {
                if case .running(_, let lineDeadline) = states[slot], lineDeadline <= now {
                    timeOut(slot, at: now, into: &actions)
                }
            }
            if now >= deadline { skipPending(.notReached) }
            evaluate(at: now, into: &actions)
        }
    }

    /// The caller gave up: everything running is cancelled (abandoned, not held against a breaker), nothing wins,
    /// and every valid bid is settled lost (reason 1).
    mutating func callerCancelled(at now: AdInstant, into actions: inout [Action]) {
        guard phase != .finished else { return }
        callerCancelled = true
        if phase != .waterfall {
            for slot in 0..<bidderCount { abandon(slot, at: now, as: .cancelled, into: &actions) }
            collectBids()
            formWaterfall()
        }
        skipPending(.notReached)
        for slot in waterfall {
            if case .filled(let ad, let latency) = states[slot] {
                states[slot] = .done(.skipped(.cancelled), latency: latency, ecpm: ad.ecpm)
                actions.append(.settle(ad, .lost(reason: .internalError, winningPrice: nil)))
                actions.append(.invalidate(ad))
            } else {
                abandon(slot, at: now, as: .cancelled, into: &actions)
            }
        }
        finish(at: now, into: &actions)
    }

    // MARK: Steps

    /// After a bidder or line settled: the bidding may end, the waterfall may decide or start more lines.
    private mutating func progress(at now: AdInstant, into actions: inout [Action]) {
        switch phase {
        case .bidding: endBiddingIfDone(at: now, into: &actions)
        case .waterfall: evaluate(at: now, into: &actions)
        case .idle, .finished: return
        }
    }

    private mutating func endBiddingIfDone(at now: AdInstant, into actions: inout [Action]) {
        for slot in 0..<bidderCount {
            if case .running = states[slot] { return }
        }
        startWaterfall(at: now, into: &actions)
    }

    /// The valid bids, best first.
    private mutating func collectBids() {
        bids = (0..<bidderCount).compactMap { slot in
            guard case .filled(let ad, _) = states[slot], let price = ad.ecpm else { return nil }
            return (slot, ad, price)
        }
        bids.sort { $0.price != $1.price ? $0.price > $1.price : $0.slot < $1.slot }
    }

    /// The waterfall's lines: in `order`, those priced above the best bid (the others are skipped as outbid).
    private mutating func formWaterfall() {
        phase = .waterfall
        waterfall.reserveCapacity(order.count)
        let best = bids.first?.price
        for index in order {
            let slot = lineSlot(index)
            if let best, Self.price(of: slots[slot]) <= best {
                states[slot] = .done(.skipped(.outbid), latency: nil, ecpm: nil)
            } else {
                waterfall.append(slot)
            }
        }
    }

    private mutating func startWaterfall(at now: AdInstant, into actions: inout [Action]) {
        collectBids()
        formWaterfall()
        if now >= deadline { skipPending(.notReached) }
        evaluate(at: now, into: &actions)
    }

    private mutating func evaluate(at now: AdInstant, into actions: inout [Action]) {
        guard phase == .waterfall else { return }
        // Past the deadline nothing more starts, whatever brought us here: a tick, or a line's own answer (its
        // timeout, clamped to the deadline, can be read before the deadline's tick). Pending lines left pending with
        // nothing running and no wake-up would leave the request undecided for ever.
        if now >= deadline { skipPending(.notReached) }
        // 1. Decide, if every line above the first fill is settled.
        var firstFill: Int?
        var undecided = false
        for (position, slot) in waterfall.enumerated() {
            switch states[slot] {
            case .filled: firstFill = position
            case .pending, .running: undecided = true
            case .done: continue
            }
            break
        }
        if !undecided {
            if let firstFill {
                settleBelow(firstFill, at: now, into: &actions)
                if case .line(let index) = slots[waterfall[firstFill]].role { winnerIndex = index }
            }
            return finish(at: now, into: &actions)
        }
        // 2. Lines below any fill can never win: cancel or never start them.
        let fill = waterfall.firstIndex { if case .filled = states[$0] { true } else { false } }
        if let fill { settleBelow(fill, at: now, into: &actions) }
        // 3. Start pending lines up to the in-flight bound (not past the deadline).
        guard now < deadline else { return }
        var running = waterfall.count { if case .running = states[$0] { true } else { false } }
        for slot in waterfall where running < maxInFlight {
            if case .filled = states[slot] { break }
            guard case .pending = states[slot] else { continue }
            states[slot] = .running(started: now, deadline: min(now + slots[slot].timeout, deadline))
            actions.append(.start(slot))
            running += 1
        }
    }

    /// Settles every line below waterfall position `position`: running lines are cancelled, fills are outranked,
    /// pending lines never start.
    private mutating func settleBelow(_ position: Int, at now: AdInstant, into actions: inout [Action]) {
        for slot in waterfall[(position + 1)...] {
            if case .filled(let ad, let latency) = states[slot] {
                states[slot] = .done(.skipped(.outranked), latency: latency, ecpm: ad.ecpm)
                actions.append(.settle(ad, .lost(reason: .lostToHigherBid, winningPrice: nil)))
                actions.append(.invalidate(ad))
            } else {
                if case .pending = states[slot] { states[slot] = .done(.skipped(.notReached), latency: nil, ecpm: nil) }
                abandon(slot, at: now, as: .cancelled, into: &actions)
            }
        }
    }

    /// A running slot timed out: cancelled, and a failure for its breaker.
    private mutating func timeOut(_ slot: Int, at now: AdInstant, into actions: inout [Action]) {
        guard case .running(let started, _) = states[slot] else { return }
        states[slot] = .done(.timeout, latency: now - started, ecpm: nil)
        actions.append(.cancel(slot))
        actions.append(.breaker(slot, .failure))
    }

    /// A running slot is given up on: cancelled, and abandoned for its breaker.
    private mutating func abandon(_ slot: Int, at now: AdInstant, as reason: SkipReason, into actions: inout [Action]) {
        guard case .running(let started, _) = states[slot] else { return }
        states[slot] = .done(.skipped(reason), latency: now - started, ecpm: nil)
        actions.append(.cancel(slot))
        actions.append(.breaker(slot, .abandoned))
    }

    private mutating func skipPending(_ reason: SkipReason) {
        for slot in waterfall {
            if case .pending = states[slot] { states[slot] = .done(.skipped(reason), latency: nil, ecpm: nil) }
        }
    }

    /// An ad that will never be delivered: settled lost with `reason` first (a bid's loss notice; a line's ad that
    /// came from a nested mediator carries a bid whose settlement was left to this decider).
    private func refuse(_ ad: LoadedAd, slot: Int, _ reason: AuctionLossReason, into actions: inout [Action]) {
        actions.append(.settle(ad, .lost(reason: reason, winningPrice: nil)))
        actions.append(.invalidate(ad))
    }

    private mutating func finish(at now: AdInstant, into actions: inout [Action]) {
        phase = .finished
        finishedAt = now
        settle(at: now, into: &actions)
        actions.append(.finish)
    }
}

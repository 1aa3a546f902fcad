import Testing

@testable import AdMediation

/// The decision engine's auction, self-ordering and pacing modes, driven with explicit instants (no tasks, no clock,
/// no network): bidders and lines in one index space, one screen for floors and expiry, settlement as actions.
@Suite("Decision engine", .timeLimit(.minutes(1)))
struct DecisionEngineTests {
    let t0 = AdInstant.zero
    func ms(_ n: Int) -> AdInstant { t0 + .milliseconds(n) }

    func ad(_ id: String, ecpm: Double? = nil, expiresAt: AdInstant? = nil) -> LoadedAd {
        LoadedAd(
            networkID: "n", placement: "p", format: .interstitial, creative: AdCreative(id: id, kind: "image"),
            ecpm: ecpm, loadedAt: t0, expiresAt: expiresAt)
    }

    func filled(_ id: String, ecpm: Double?) -> Result<AdLoadResult, AdError> { .success(.filled(ad(id, ecpm: ecpm))) }

    let none: Result<AdLoadResult, AdError> = .success(.noFill(NoFill(reason: "none")))

    /// Bidders `b0…` with the given timeouts, lines `l0…` with the given floors (and publisher `ecpm`), 1 s each.
    func engine(
        bidders: [Int] = [100, 100], floors: [Double?] = [nil], ecpm: Double? = nil, auction: AuctionType = .firstPrice,
        order: [Int]? = nil, maxInFlight: Int = 4, blocked: SkipReason? = nil, deadlineMs: Int = 5000
    ) -> DecisionEngine {
        let placement = PlacementConfiguration(
            format: .interstitial,
            lines: floors.enumerated().map {
                WaterfallLine(network: "l\($0)", placement: "x", floorEcpm: $1, ecpm: ecpm)
            },
            maxInFlight: maxInFlight, deadline: .milliseconds(deadlineMs),
            bidders: bidders.enumerated().map {
                BidderLine(network: "b\($0)", placement: "y", timeout: .milliseconds($1))
            },
            auction: auction)
        return DecisionEngine(placement: placement, order: order, blocked: blocked, startedAt: t0)
    }

    func started(_ actions: [DecisionEngine.Action]) -> [Int] {
        actions.compactMap { if case .start(let i) = $0 { i } else { nil } }
    }

    func cancelled(_ actions: [DecisionEngine.Action]) -> [Int] {
        actions.compactMap { if case .cancel(let i) = $0 { i } else { nil } }
    }

    /// `settle:<id>:<result>` and `invalidate:<id>`, in order.
    func settlements(_ actions: [DecisionEngine.Action]) -> [String] {
        actions.compactMap {
            switch $0 {
            case .settle(let ad, .won(let price)): "settle:\(ad.creative.id):won \(price)"
            case .settle(let ad, .lost(let reason, _)): "settle:\(ad.creative.id):lost \(reason.code)"
            case .invalidate(let ad): "invalidate:\(ad.creative.id)"
            default: nil
            }
        }
    }

    func winner(_ m: DecisionEngine) -> (id: String, slot: Int, ecpm: Double?)? {
        guard case .filled(let ad, let slot, let ecpm, _) = m.decision else { return nil }
        return (ad.creative.id, slot, ecpm)
    }

    @Test("a line's own timeout read at the deadline, before the deadline's tick, still decides the request")
    func aLineAnsweringAtTheDeadlineBeforeItsTickDecides() {
        // Sequential lines: the third starts with its timeout clamped to the deadline, so its own timeout answer and
        // the deadline fall on the same instant; when the answer is read first, the lines never started must be
        // skipped there and then (found by the hung-partner benchmark: such requests never answered).
        var m = engine(bidders: [], floors: [nil, nil, nil], maxInFlight: 1, deadlineMs: 400)
        #expect(started(m.begin(at: t0)) == [0])
        _ = m.answer(0, .failure(AdError(.timeout, "own timeout")), at: ms(400))
        #expect(m.isFinished)
        #expect(m.nextWakeUp == nil)
        let trace = m.trace(placement: "p", at: ms(400))
        #expect(trace.lines.map(\.outcome) == [.timeout, .skipped(.notReached), .skipped(.notReached)])
        guard case .timeout = m.decision else {
            Issue.record("expected a timeout decision, got \(String(describing: m.decision))")
            return
        }
    }

    @Test func biddersAndLinesShareOneIndexSpaceBiddersFirst() {
        var m = engine(bidders: [100, 100], floors: [nil, nil])
        #expect(started(m.begin(at: t0)) == [0, 1], "every bidder at once")
        _ = m.answer(0, none, at: ms(5))
        #expect(started(m.answer(1, none, at: ms(10))) == [2, 3], "then the lines, slots after the bidders")
        #expect(m.lineSlot(1) == 3)
    }

    @Test func linesPricedAtOrUnderTheBestBidAreSkippedAsOutbidAndNeverStarted() {
        var m = engine(bidders: [100], floors: [5.0, 3.0])
        _ = m.begin(at: t0)
        #expect(started(m.answer(0, filled("bid", ecpm: 3.0), at: ms(10))) == [1])
        #expect(m.trace(placement: "p", at: ms(10)).lines[1].outcome == .skipped(.outbid))
    }

    @Test func aLineFillPricedLikeTheBestBidWinsAndTheBidIsSettledLost() {
        var m = engine(bidders: [100], floors: [nil], ecpm: 4.0)
        _ = m.begin(at: t0)
        _ = m.answer(0, filled("bid", ecpm: 3.0), at: ms(10))
        let actions = m.answer(1, filled("line", ecpm: 3.0), at: ms(20))
        #expect(winner(m)?.id == "line" && winner(m)?.slot == 1)
        #expect(settlements(actions) == ["settle:line:won 3.0", "settle:bid:lost 102", "invalidate:bid"])
        #expect(m.trace(placement: "p", at: ms(20)).winnerIndex == 0)
    }

    /// The losing line's ad is told it lost to the winning bid's price before it is invalidated: a line can carry a
    /// bid whose settlement a nested mediator left to this decider.
    @Test func aBidStrictlyAboveTheWaterfallWinnerWinsAndTheLineFillIsSettledLostThenInvalidated() {
        var m = engine(bidders: [100], floors: [nil], ecpm: 4.0)
        _ = m.begin(at: t0)
        _ = m.answer(0, filled("bid", ecpm: 3.0), at: ms(10))
        let actions = m.answer(1, filled("line", ecpm: 2.5), at: ms(20))
        #expect(winner(m)?.id == "bid" && winner(m)?.slot == 0 && winner(m)?.ecpm == 3.0)
        #expect(settlements(actions) == ["settle:line:lost 102", "invalidate:line", "settle:bid:won 3.0"])
        let trace = m.trace(placement: "p", at: ms(20))
        #expect(trace.winningBid == 0 && trace.winnerIndex == nil)
        #expect(trace.bids[0].auction == .won(clearingPrice: 3.0))
    }

    @Test func aSecondPriceClearsAtTheNextValidBidPlusOneCent() {
        var m = engine(bidders: [100, 100], floors: [], auction: .secondPrice)
        _ = m.begin(at: t0)
        _ = m.answer(0, filled("low", ecpm: 2.0), at: ms(5))
        let actions = m.answer(1, filled("high", ecpm: 3.5), at: ms(6))
        #expect(winner(m)?.id == "high" && winner(m)?.ecpm == 2.01)
        #expect(
            settlements(actions) == ["settle:high:won 2.01", "settle:low:lost 102", "invalidate:low"])
    }

    @Test func theBiddingEndsAtTheLatestBidderDeadlineWhereTheRestTimeOut() {
        var m = engine(bidders: [100, 300], floors: [nil])
        _ = m.begin(at: t0)
        #expect(m.nextWakeUp == ms(300), "the latest bidder deadline, not the first")
        _ = m.answer(0, none, at: ms(50))
        let actions = m.advance(to: ms(300))
        #expect(cancelled(actions) == [1])
        #expect(started(actions) == [2], "the waterfall starts when the bidding ends")
        let trace = m.trace(placement: "p", at: ms(300))
        #expect(trace.bids[1].outcome == .timeout && trace.bids[1].latency == .milliseconds(300))
    }

    @Test func aBidAnsweringAfterTheBiddingEndedIsSettledLostThenInvalidated() {
        var m = engine(bidders: [100], floors: [nil])
        _ = m.begin(at: t0)
        _ = m.advance(to: ms(100))
        let late = m.answer(0, filled("late", ecpm: 9.0), at: ms(150))
        #expect(settlements(late) == ["settle:late:lost 1", "invalidate:late"])
        #expect(m.trace(placement: "p", at: ms(150)).bids[0].outcome == .timeout)
    }

    @Test func callerCancellationDuringTheBiddingCancelsBiddersAndSettlesValidBidsLost() {
        var m = engine(bidders: [100, 100], floors: [nil], ecpm: 4.0)
        _ = m.begin(at: t0)
        _ = m.answer(0, filled("bid", ecpm: 2.0), at: ms(10))
        let actions = m.callerCancelled(at: ms(20))
        #expect(cancelled(actions) == [1])
        #expect(settlements(actions) == ["settle:bid:lost 1", "invalidate:bid"])
        guard case .cancelled = m.decision else {
            Issue.record("expected a cancelled decision, got \(String(describing: m.decision))")
            return
        }
        let trace = m.trace(placement: "p", at: ms(20))
        #expect(trace.bids[1].outcome == .skipped(.cancelled))
        #expect(trace.lines[0].outcome == .skipped(.notReached))
    }

    @Test func aBidWithoutAFinitePriceIsRefusedAsAnInvalidResponse() {
        var m = engine(bidders: [100], floors: [])
        _ = m.begin(at: t0)
        let actions = m.answer(0, filled("nan", ecpm: .infinity), at: ms(10))
        #expect(settlements(actions) == ["settle:nan:lost 3", "invalidate:nan"])
        #expect(m.trace(placement: "p", at: ms(10)).bids[0].outcome.name == "error")
    }

    @Test func oneScreenChecksExpiryThenPriceThenFloorForBidsAndLines() {
        let expired = ad("old", ecpm: 1.0, expiresAt: ms(5))
        #expect(DecisionEngine.screen(expired, floor: 2.0, requiresPrice: true, at: ms(10))?.1 == .expired)
        #expect(DecisionEngine.screen(ad("u"), floor: 2.0, requiresPrice: true, at: ms(10))?.1 == .invalidResponse)
        #expect(DecisionEngine.screen(ad("u"), floor: 2.0, requiresPrice: false, at: ms(10)) == nil, "a line's fill")
        #expect(
            DecisionEngine.screen(ad("c", ecpm: 1.5), floor: 2.0, requiresPrice: false, at: ms(10))?.1 == .belowFloor)
        #expect(DecisionEngine.screen(ad("ok", ecpm: 2.0), floor: 2.0, requiresPrice: true, at: ms(10)) == nil)
    }

    @Test func theSelfOrderingModeTriesLinesInTheGivenOrder() {
        var m = engine(bidders: [], floors: [nil, nil, nil], order: [2, 0, 1], maxInFlight: 1)
        #expect(started(m.begin(at: t0)) == [2])
        #expect(started(m.answer(2, none, at: ms(10))) == [0])
        #expect(m.trace(placement: "p", at: ms(10)).order == [2, 0, 1])
    }

    @Test func aBlockedRequestIsDecidedAtOnceWithEveryLineSkipped() {
        var m = engine(bidders: [100], floors: [nil, nil], blocked: .capped)
        #expect(m.isFinished)
        #expect(started(m.begin(at: t0)).isEmpty)
        let trace = m.trace(placement: "p", at: ms(10))
        #expect(trace.lines.map(\.outcome) == [.skipped(.capped), .skipped(.capped)])
        #expect(trace.duration == .zero && trace.bids.isEmpty)
        guard case .noFill("capped") = m.decision else {
            Issue.record("expected no fill for the cap, got \(String(describing: m.decision))")
            return
        }
    }

    @Test func noFillByTheDeadlineIsATimeoutDecision() {
        var m = engine(bidders: [], floors: [nil], deadlineMs: 200)
        _ = m.begin(at: t0)
        _ = m.advance(to: ms(200))
        guard case .timeout = m.decision else {
            Issue.record("expected a timeout, got \(String(describing: m.decision))")
            return
        }
    }

    @Test func breakerRejectedBiddersAreSkippedAndTheBiddingEndsWithoutThem() {
        var m = engine(bidders: [100, 100], floors: [nil])
        _ = m.begin(at: t0)
        _ = m.skip(0, reason: .breakerOpen, at: t0)
        #expect(started(m.skip(1, reason: .breakerOpen, at: t0)) == [2])
        #expect(
            m.trace(placement: "p", at: t0).bids.map(\.outcome) == [.skipped(.breakerOpen), .skipped(.breakerOpen)])
    }
}

/// Each step of the engine with its actions in a new array (the driver reuses one buffer instead).
extension DecisionEngine {
    mutating func begin(at now: AdInstant) -> [Action] { collect { $0.begin(at: now, into: &$1) } }

    mutating func answer(_ slot: Int, _ result: Result<AdLoadResult, AdError>, at now: AdInstant) -> [Action] {
        collect { $0.answer(slot, result, at: now, into: &$1) }
    }

    mutating func advance(to now: AdInstant) -> [Action] { collect { $0.advance(to: now, into: &$1) } }

    mutating func skip(_ slot: Int, reason: SkipReason, at now: AdInstant) -> [Action] {
        collect { $0.skip(slot, reason: reason, at: now, into: &$1) }
    }

    mutating func callerCancelled(at now: AdInstant) -> [Action] {
        collect { $0.callerCancelled(at: now, into: &$1) }
    }

    /// The winning ad, once decided with one.
    var winner: LoadedAd? {
        guard case .filled(let ad, _, _, _) = decision else { return nil }
        return ad
    }

    private mutating func collect(_ step: (inout Self, inout [Action]) -> Void) -> [Action] {
        var actions: [Action] = []
        step(&self, &actions)
        return actions
    }
}

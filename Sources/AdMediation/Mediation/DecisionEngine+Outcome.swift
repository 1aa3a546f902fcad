// The decision engine's outcome: the trace it reports and the auction's settlement at the end (the events and steps
// that lead there are in DecisionEngine.swift).

extension DecisionEngine {
    // MARK: Trace

    /// The trace so far (complete once finished): lines in configured order, every bidder, the order tried.
    func trace(placement: String, at now: AdInstant) -> MediationTrace {
        let lineCount = slots.count - bidderCount
        if let blocked {
            let lines = (0..<lineCount).map { index in
                let slot = slots[lineSlot(index)]
                return LineTrace(
                    network: slot.network, placement: slot.placement, outcome: .skipped(blocked), latency: nil,
                    ecpm: nil)
            }
            return MediationTrace(
                placement: placement, lines: lines, winnerIndex: nil, duration: .zero, abLabel: abLabel)
        }
        let lines = (0..<lineCount).map { index in
            let (outcome, latency, ecpm) = traced(lineSlot(index), at: now)
            let slot = slots[lineSlot(index)]
            return LineTrace(
                network: slot.network, placement: slot.placement, outcome: outcome, latency: latency, ecpm: ecpm)
        }
        let bids = (0..<bidderCount).map { index in
            let (outcome, latency, price) = traced(index, at: now)
            return BidTrace(
                network: slots[index].network, placement: slots[index].placement, outcome: outcome, price: price,
                latency: latency, auction: auctions[index])
        }
        var winningBid: Int?
        var winner = winnerIndex
        if case .filled(_, let slot, _, _) = decision, slot < bidderCount { (winningBid, winner) = (slot, nil) }
        if case .cancelled = decision { winner = nil }
        return MediationTrace(
            placement: placement, lines: lines, winnerIndex: winner, duration: (finishedAt ?? now) - startedAt,
            abLabel: abLabel, bids: bids, winningBid: winningBid, order: order)
    }

    func traced(_ slot: Int, at now: AdInstant) -> (LineOutcome, Duration?, Double?) {
        switch states[slot] {
        case .pending: (.skipped(.notReached), nil, nil)
        case .running(let started, _): (.skipped(.cancelled), now - started, nil)
        case .filled(let ad, let latency): (.fill, latency, ad.ecpm)
        case .done(let outcome, let latency, let ecpm): (outcome, latency, ecpm)
        }
    }

    // MARK: Settlement

    /// The highest price that filled wins; every other valid bid is settled lost and invalidated.
    mutating func settle(at now: AdInstant, into actions: inout [Action]) {
        let line = winnerIndex.flatMap { index -> (slot: Int, ad: LoadedAd, price: Double)? in
            let slot = lineSlot(index)
            guard case .filled(let ad, _) = states[slot] else { return nil }
            return (slot, ad, ad.ecpm ?? slots[slot].ecpm ?? slots[slot].floor ?? 0)
        }
        if callerCancelled {
            if let line {
                actions.append(.settle(line.ad, .lost(reason: .internalError, winningPrice: nil)))
                actions.append(.invalidate(line.ad))
            }
            decision = .cancelled
            return settleBids(except: nil, .lost(reason: .internalError, winningPrice: nil), into: &actions)
        }
        if let bid = bids.first, line.map({ bid.price > $0.price }) ?? true {
            let clearing = Self.clearingPrice(
                of: bid.price, second: bids.dropFirst().first?.price, auction: auction, floor: slots[bid.slot].floor)
            if let line {
                actions.append(.settle(line.ad, .lost(reason: .lostToHigherBid, winningPrice: clearing)))
                actions.append(.invalidate(line.ad))
            }
            if !defersWinnerSettlement { actions.append(.settle(bid.ad, .won(clearingPrice: clearing))) }
            auctions[bid.slot] = .won(clearingPrice: clearing)
            decision = .filled(bid.ad, slot: bid.slot, ecpm: clearing, precision: .exact)
            return settleBids(
                except: bid.slot, .lost(reason: .lostToHigherBid, winningPrice: clearing), into: &actions)
        }
        guard let line else {
            decision = now >= deadline ? .timeout : .noFill("waterfall exhausted")
            return
        }
        if !defersWinnerSettlement { actions.append(.settle(line.ad, .won(clearingPrice: line.price))) }
        settleBids(except: nil, .lost(reason: .lostToHigherBid, winningPrice: line.price), into: &actions)
        // A fill the network did not price takes the line's publisher-defined price, if the line has one.
        decision =
            line.ad.ecpm != nil
            ? .filled(line.ad, slot: line.slot, ecpm: line.ad.ecpm, precision: line.ad.pricePrecision)
            : .filled(line.ad, slot: line.slot, ecpm: slots[line.slot].ecpm, precision: .publisherDefined)
    }

    mutating func settleBids(except winner: Int?, _ result: AuctionResult, into actions: inout [Action]) {
        for bid in bids where bid.slot != winner {
            actions.append(.settle(bid.ad, result))
            actions.append(.invalidate(bid.ad))
            auctions[bid.slot] = result
        }
    }
}

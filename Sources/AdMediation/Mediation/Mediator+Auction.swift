import Tracing

/// The unified auction: A/B arm choice, bid collection and classification, prices and clearing.
extension Mediator {
    /// The arm a request runs, and the key of its optimizer state (`placement`, or `placement#label` for an arm). With
    /// a user id the choice is sticky: an FNV-1a hash of placement and user picks the arm, so a user sees one arm.
    static func arm(of placement: PlacementConfiguration, id: String, userID: String?) -> (
        PlacementConfiguration, String
    ) {
        guard !placement.arms.isEmpty else { return (placement, id) }
        let total = placement.arms.reduce(0) { $0 + $1.weight }
        var point: Double
        if let userID {
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            for byte in "\(id)\u{0}\(userID)".utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
            point = Double(hash >> 11) / Double(UInt64(1) << 53)
        } else {
            point = Double.random(in: 0..<1)
        }
        point *= total
        for arm in placement.arms {
            if point < arm.weight { return (placement.variant(arm), "\(id)#\(arm.label)") }
            point -= arm.weight
        }
        let last = placement.arms[placement.arms.count - 1]
        return (placement.variant(last), "\(id)#\(last.label)")
    }

    /// The price a line must beat a bid with: its `floor_ecpm`, else its publisher `ecpm`, else 0.
    static func price(of line: WaterfallLine) -> Double { line.floorEcpm ?? line.ecpm ?? 0 }

    /// First price: the bid. Second price: max(the next valid bid + 0.01, the bidder's floor), never above the bid.
    static func clearingPrice(
        of winner: (index: Int, ad: LoadedAd, price: Double), among valid: [(index: Int, ad: LoadedAd, price: Double)],
        auction: AuctionType, floor: Double?
    ) -> Double {
        guard auction == .secondPrice else { return winner.price }
        let second = valid.filter { $0.index != winner.index }.map(\.price).max()
        let clearing = max(second.map { $0 + 0.01 } ?? 0, floor ?? 0)
        return min(winner.price, (clearing * 10_000).rounded() / 10_000)
    }

    struct BidAnswer: Sendable {
        var result: Result<AdLoadResult, AdError>?
        var latency: Duration?
        var skipped: SkipReason?
        var timedOut = false
    }

    /// Asks every bidder at once, each within min(its timeout, the time left), with `floor_ecpm` as the request's
    /// floor. A timer at the latest bidder deadline cancels those still running (they count as timeouts); their late
    /// answers are invalidated. Breakers apply as for lines.
    func collectBids(
        _ request: AdRequest, format: AdFormat, placement: PlacementConfiguration, deadline: AdInstant,
        tracer: (any Tracer)?
    ) async -> [BidAnswer] {
        let start = clock.now
        var answers = Array(repeating: BidAnswer(), count: placement.bidders.count)
        await withTaskGroup(of: (index: Int, result: Result<AdLoadResult, AdError>)?.self) { group in
            var running: [Int: (cancellation: ChildCancellation, probe: Bool)] = [:]
            var latest = start
            for (index, bidder) in placement.bidders.enumerated() {
                let admission = breakers[bidder.network]?.withLock { $0.admit(at: clock.now) } ?? .allowed
                if admission == .probe { breakerChanged(bidder.network, to: .halfOpen(probing: true)) }
                let remaining = deadline - clock.now
                guard admission != .rejected, remaining > .zero, let network = networks[bidder.network] else {
                    answers[index].skipped = admission == .rejected ? .breakerOpen : .notReached
                    continue
                }
                var bidRequest = request
                bidRequest.placement = bidder.placement
                bidRequest.format = format
                bidRequest.timeout = min(bidder.timeout, remaining)
                bidRequest.floorEcpm = bidder.floorEcpm
                latest = max(latest, clock.now + min(bidder.timeout, remaining))
                let cancellation = ChildCancellation()
                running[index] = (cancellation, admission == .probe)
                let sent = bidRequest
                group.addTask {
                    (index, await cancellation.run { await Self.tracedLoad(sent, from: network, tracer: tracer) })
                }
            }
            let timer = ChildCancellation()
            group.addTask { [clock, latest] in
                await timer.run { try? await clock.sleep(until: latest) }
                return nil
            }
            while let input = await group.next() {
                guard let (index, result) = input else {
                    // The bidders' time is up: whoever is still running timed out. When the caller cancelled instead,
                    // they were abandoned (traced `skipped(cancelled)`, not held against their breaker).
                    let callerCancelled = Task.isCancelled
                    for (index, entry) in running {
                        if callerCancelled {
                            answers[index].skipped = .cancelled
                        } else {
                            answers[index].timedOut = true
                        }
                        answers[index].latency = clock.now - start
                        entry.cancellation.cancel()
                        recordBreaker(
                            placement.bidders[index].network, probe: entry.probe,
                            callerCancelled ? .abandoned : .failure)
                    }
                    running = [:]
                    continue
                }
                guard let entry = running.removeValue(forKey: index) else {
                    if case .success(.filled(let ad)) = result {
                        ad.settleAuction(.lost(reason: .internalError, winningPrice: nil))
                        ad.invalidate()
                    }
                    continue
                }
                answers[index].result = result
                answers[index].latency = clock.now - start
                let event: WaterfallStateMachine.BreakerEvent =
                    switch result {
                    case .success: .success
                    case .failure(let error) where error.code == .cancelled: .abandoned
                    case .failure: .failure
                    }
                recordBreaker(placement.bidders[index].network, probe: entry.probe, event)
                if running.isEmpty { timer.cancel() }
            }
        }
        return answers
    }

    /// Turns the bidders' answers into their traces and the valid bids. A fill that has expired, has no finite price
    /// or is under the bidder's floor is settled as lost (reason 2, 3 or 100) and invalidated.
    static func classify(
        _ answers: [BidAnswer], bidders: [BidderLine], at now: AdInstant
    ) -> ([BidTrace], [(index: Int, ad: LoadedAd, price: Double)]) {
        var traces: [BidTrace] = []
        var valid: [(index: Int, ad: LoadedAd, price: Double)] = []
        for (index, answer) in answers.enumerated() {
            let bidder = bidders[index]
            var trace = BidTrace(
                network: bidder.network, placement: bidder.placement, outcome: .skipped(.notReached),
                latency: answer.latency)
            func reject(_ ad: LoadedAd, _ outcome: LineOutcome, _ reason: AuctionLossReason) {
                trace.outcome = outcome
                trace.auction = .lost(reason: reason, winningPrice: nil)
                ad.settleAuction(.lost(reason: reason, winningPrice: nil))
                ad.invalidate()
            }
            if let skipped = answer.skipped {
                trace.outcome = .skipped(skipped)
            } else if answer.timedOut {
                trace.outcome = .timeout
            } else if let result = answer.result {
                switch result {
                case .success(.filled(let ad)):
                    trace.price = ad.ecpm
                    if ad.isExpired(at: now) {
                        reject(ad, .skipped(.expired), .expired)
                    } else if let price = ad.ecpm, price.isFinite, price >= 0 {
                        if let floor = bidder.floorEcpm, price < floor {
                            reject(ad, .skipped(.belowFloor), .belowFloor)
                        } else {
                            trace.outcome = .fill
                            valid.append((index, ad, price))
                        }
                    } else {
                        reject(ad, .error(AdError(.invalidResponse, "a bid without a finite price")), .invalidResponse)
                    }
                case .success(.noFill(let noFill)):
                    trace.outcome = .noFill(reason: noFill.reason)
                case .failure(let error):
                    trace.outcome =
                        switch error.code {
                        case .timeout: .timeout
                        case .cancelled: .skipped(.cancelled)
                        default: .error(error)
                        }
                }
            }
            traces.append(trace)
        }
        return (traces, valid)
    }
}

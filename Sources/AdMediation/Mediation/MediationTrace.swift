/// Why a line was not asked, or its answer not used.
public enum SkipReason: String, Sendable, Hashable, Codable {
    /// The network's circuit breaker is open.
    case breakerOpen = "breaker_open"
    /// The placement reached its frequency cap.
    case capped
    /// The placement's minimum interval since the last impression has not passed.
    case paced
    /// The fill was priced under the line's floor.
    case belowFloor = "below_floor"
    /// The fill had already expired.
    case expired
    /// The line was running when the request was decided or cancelled.
    case cancelled
    /// The line filled, but a higher line won.
    case outranked
    /// The request was decided before this line was started.
    case notReached = "not_reached"
    /// A bid priced at or above the line's price was already in hand, so the line was not asked.
    case outbid
    /// The privacy rules forbid asking this network (``LineTrace/privacyReason`` says why).
    case privacyBlocked = "privacy_blocked"
}

/// What happened on one line.
public enum LineOutcome: Sendable, Hashable {
    /// The line filled (the winner, when ``MediationTrace/winnerIndex`` points at it).
    case fill
    /// The network had nothing.
    case noFill(reason: String)
    /// The network failed.
    case error(AdError)
    /// The line ran past its timeout or the request's deadline.
    case timeout
    /// The line was not asked, or its answer not used.
    case skipped(SkipReason)

    /// A stable name: `fill`, `no_fill`, `error`, `timeout`, `skipped`.
    public var name: String {
        switch self {
        case .fill: "fill"
        case .noFill: "no_fill"
        case .error: "error"
        case .timeout: "timeout"
        case .skipped: "skipped"
        }
    }
}

/// One line of a trace.
public struct LineTrace: Sendable, Hashable {
    /// The network's id.
    public var network: String
    /// The network's placement id.
    public var placement: String
    /// What happened.
    public var outcome: LineOutcome
    /// From the line's start to its answer (or timeout); nil when it never ran.
    public var latency: Duration?
    /// The fill's price, when it had one.
    public var ecpm: Double?
    /// Why the privacy rules blocked the network (`tcf purpose 1 not consented for vendor 755`), when they did.
    public var privacyReason: String? = nil
    /// Why the privacy rules restricted what the network may receive (`coppa`, `invalid us_privacy "1yyn"
    /// (invalid_field)`, …), when they let it be asked; empty when nothing was restricted.
    public var privacyRestrictions: [String] = []
}

/// The record of one mediated request: every line's outcome, and the winner.
public struct MediationTrace: Sendable, Hashable {
    /// The mediated placement.
    public var placement: String
    /// Lines in waterfall order.
    public var lines: [LineTrace]
    /// The index of the winning line, if any.
    public var winnerIndex: Int?
    /// From the request's start to its decision.
    public var duration: Duration
    /// The placement's A/B label, if it has one.
    public var abLabel: String? = nil
    /// Every bidder of the placement, in configured order (empty without bidders).
    public var bids: [BidTrace] = []
    /// The index of the winning bid in ``bids``, when a bid won.
    public var winningBid: Int? = nil
    /// The order the lines were tried in (configured indexes): the optimizer's order, or the configured one.
    public var order: [Int] = []

    /// The winning line, if any.
    public var winner: LineTrace? { winnerIndex.map { lines[$0] } }
}

/// What one bidder did in a request's auction.
public struct BidTrace: Sendable, Hashable {
    /// The bidder's network id.
    public var network: String
    /// The bidder's placement id.
    public var placement: String
    /// `fill` for a valid bid; `no_fill` (with the reason: no bid, or an invalid bid and why), `error`, `timeout` or
    /// `skipped` (breaker open, expired, below floor) otherwise.
    public var outcome: LineOutcome
    /// The bid's price, when it bid.
    public var price: Double?
    /// From the auction's start to the answer.
    public var latency: Duration?
    /// Won (with the clearing price) or lost (with the loss reason sent), for every bid that was priced.
    public var auction: AuctionResult?
    /// Why the privacy rules blocked the bidder, when they did.
    public var privacyReason: String? = nil
    /// Why the privacy rules restricted what the bidder may receive, when they let it be asked.
    public var privacyRestrictions: [String] = []
}

/// The answer of ``Mediator/loadWithTrace(_:)``.
public struct MediationOutcome: Sendable {
    /// The load result, or the error when the request itself failed (unknown placement, cancellation).
    public var result: Result<AdLoadResult, AdError>
    /// What every line did.
    public var trace: MediationTrace
}

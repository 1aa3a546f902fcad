import Foundation

/// The vocabulary of ``DecisionEngine`` — its slots, events' answers and actions, its decision — and the pure rules
/// it applies to every answer: one screen for expiry, bid prices and floors, and the auction's prices.
extension DecisionEngine {
    /// What a slot is: the bidder or the waterfall line at a configured index.
    enum Role: Sendable, Equatable {
        case bidder(Int)
        case line(Int)
    }

    /// One bidder or line, as the driver needs it to send its request.
    struct Slot: Sendable {
        var role: Role
        var network: String
        var placement: String
        var floor: Double?
        var timeout: Duration
        /// A line's publisher-defined price (nil for bidders).
        var ecpm: Double?
    }

    /// What an answer tells the network's circuit breaker.
    enum BreakerEvent: Sendable, Equatable {
        case success, failure, abandoned
    }

    /// What the driver must do.
    enum Action: Sendable {
        /// Start loading slot `i` (the driver answers with ``skip(_:reason:at:into:)`` when its breaker is open).
        case start(Int)
        /// Cancel the running load of slot `i`.
        case cancel(Int)
        /// Tell an ad's network how the auction ended for it (before any invalidation of it).
        case settle(LoadedAd, AuctionResult)
        /// Invalidate an ad that will never be delivered.
        case invalidate(LoadedAd)
        /// Feed the breaker of slot `i`'s network.
        case breaker(Int, BreakerEvent)
        /// The request is decided; read ``decision``.
        case finish
    }

    /// How the request ended.
    enum Decision: Sendable {
        /// Slot `slot` won with the ad at `ecpm`.
        case filled(LoadedAd, slot: Int, ecpm: Double?, precision: RevenuePrecision)
        /// Nothing filled (or pacing blocked the request), with the reason.
        case noFill(String)
        /// Nothing filled before the request's deadline.
        case timeout
        /// The caller cancelled.
        case cancelled
    }

    /// Why a fill is refused, if it is (the one place floors and expiry are checked): expired; for a bid, a price
    /// that is missing, not finite or negative; a price under `floor`.
    static func screen(_ ad: LoadedAd, floor: Double?, requiresPrice: Bool, at now: AdInstant)
        -> (LineOutcome, AuctionLossReason)?
    {
        if ad.isExpired(at: now) { return (.skipped(.expired), .expired) }
        if requiresPrice, !(ad.ecpm.map { $0.isFinite && $0 >= 0 } ?? false) {
            return (.error(AdError(.invalidResponse, "a bid without a finite price")), .invalidResponse)
        }
        if let floor, let price = ad.ecpm, price < floor { return (.skipped(.belowFloor), .belowFloor) }
        return nil
    }

    /// The price a line must beat a bid with: its `floor_ecpm`, else its publisher `ecpm`, else 0.
    static func price(of slot: Slot) -> Double { slot.floor ?? slot.ecpm ?? 0 }

    /// First price: the bid. Second price: max(the next valid bid + 0.01, the bidder's floor), never above the bid.
    /// Exact decimals: the cent is added to the prices as the bidders wrote them, and nothing is rounded (a floor of
    /// 0.930768 clears at 0.930768; 2.35 + 0.01 is 2.36).
    static func clearingPrice(of price: Double, second: Double?, auction: AuctionType, floor: Double?) -> Double {
        guard auction == .secondPrice else { return price }
        let clearing = max(second.map(addingOneCent) ?? 0, floor ?? 0)
        return min(price, clearing)
    }

    /// `value + 0.01` in decimal arithmetic, read back as the double nearest to the exact sum (binary arithmetic gives
    /// 2.3600000000000003 for 2.35 + 0.01). A value Decimal cannot read falls back to binary addition.
    static func addingOneCent(_ value: Double) -> Double {
        guard value.isFinite, let decimal = Decimal(string: "\(value)"), let cent = Decimal(string: "0.01"),
            let sum = Double("\(decimal + cent)")
        else { return value + 0.01 }
        return sum
    }
}

/// Why a bid lost an auction: an OpenRTB 2.6 loss reason code (section 5.25 of the standard, "Loss Reason Codes"),
/// sent to the bidder in its loss notice (`${AUCTION_LOSS}`). A struct over the code, so new reasons never break a
/// `switch`.
public struct AuctionLossReason: Hashable, Sendable, CustomStringConvertible {
    /// The standard's numeric code.
    public let code: Int
    /// A stable snake_case name for traces and metrics.
    public let name: String

    /// A reason with its standard code and a name.
    public init(code: Int, name: String) {
        self.code = code
        self.name = name
    }

    /// 1: the auction failed on the mediator's side (the request was cancelled, or the bid came too late).
    public static let internalError = AuctionLossReason(code: 1, name: "internal_error")
    /// 2: the impression opportunity expired (the bid's `exp` passed before it could be used).
    public static let expired = AuctionLossReason(code: 2, name: "expired")
    /// 3: the bid response was invalid (wrong id, unknown impression, bad price or size).
    public static let invalidResponse = AuctionLossReason(code: 3, name: "invalid_response")
    /// 100: the bid was below the auction floor.
    public static let belowFloor = AuctionLossReason(code: 100, name: "below_floor")
    /// 102: the bid lost to a higher bid (or to a waterfall line priced higher).
    public static let lostToHigherBid = AuctionLossReason(code: 102, name: "lost_to_higher_bid")

    /// `"102 lost_to_higher_bid"`.
    public var description: String { "\(code) \(name)" }
}

/// How an auction ended for one priced ad, as the mediator tells its network (``LoadedAd/settleAuction(_:)``).
public enum AuctionResult: Hashable, Sendable {
    /// The ad won and clears at `clearingPrice` (CPM, US dollars).
    case won(clearingPrice: Double)
    /// The ad lost for `reason`; `winningPrice` is the price that beat it, when there was one.
    case lost(reason: AuctionLossReason, winningPrice: Double?)
}

/// What a losing bidder's loss notice (OpenRTB `lurl`) tells it about the auction it lost
/// (``PlacementConfiguration/lossNotices``, ``AdRequest/lossNotices``).
public enum LossNoticeContent: String, Sendable, Hashable {
    /// The loss reason and the price that beat the bid (`${AUCTION_PRICE}`, `${AUCTION_MIN_TO_WIN}`): standard
    /// OpenRTB, and the default.
    case reasonAndPrice = "reason_and_price"
    /// The loss reason only: the price macros of a loss notice are left empty, so a loser never learns another
    /// partner's price. Win and billing notices keep their own clearing price.
    case reasonOnly = "reason_only"

    /// The stricter of two settings (a setting on any mediator on the path holds for the whole path).
    func stricter(_ other: LossNoticeContent) -> LossNoticeContent {
        self == .reasonOnly || other == .reasonOnly ? .reasonOnly : .reasonAndPrice
    }
}

extension AuctionResult {
    /// This result as a loss notice under `content` may tell it: a loss without its winning price for
    /// ``LossNoticeContent/reasonOnly``; a win unchanged.
    func disclosing(_ content: LossNoticeContent) -> AuctionResult {
        guard content == .reasonOnly, case .lost(let reason, let price) = self, price != nil else { return self }
        return .lost(reason: reason, winningPrice: nil)
    }
}

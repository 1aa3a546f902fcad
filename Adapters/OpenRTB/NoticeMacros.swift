import AdMediation
import AdTransport
import AdapterKit
import AdapterSupport
import Foundation

/// Exact decimal prices for notices: a price is never rounded, and a winner's clearing price never exceeds its bid.
enum ExactPrice {
    /// The decimal of `value` as its shortest round-trip text (`1.16346` for the `Double` nearest 1.16346); nil when
    /// it is not finite.
    static func decimal(_ value: Double) -> Decimal? {
        guard value.isFinite else { return nil }
        return Decimal(string: String(value), locale: Locale(identifier: "en_US_POSIX"))
    }

    /// `value` in plain notation, no exponent, no trailing zeros (`2.35`, `0.00001`, `3`).
    static func text(_ value: Decimal) -> String {
        value.description
    }

    /// `value` rounded towards zero to `scale` decimals.
    static func truncated(_ value: Decimal, scale: Int) -> Decimal {
        var input = value
        var output = Decimal()
        NSDecimalRound(&output, &input, scale, .down)
        return output
    }

    /// The increment a bid needs to beat another: one cent.
    static let increment = Decimal(sign: .plus, exponent: -2, significand: 1)
}

/// The values of OpenRTB 2.6 §4.4 notice macros that one bid fixes.
struct NoticeContext: Sendable {
    var auctionID: String
    var bidID: String
    var impID: String
    var seat: String
    /// The bid's `adid`, if any (`${AUCTION_AD_ID}`).
    var adID: String = ""
    /// The bid's price as its JSON text, exactly, when it was read.
    var bidPrice: Decimal? = nil
    /// The bid's price as the number the auction compared (the fill's eCPM).
    var bidNumber: Double? = nil
    /// The request announced a second-price auction (`at: 2`): a loss notice's winning price is then a clearing price,
    /// not the winner's bid, and the lowest bid that would have won is not known.
    var secondPrice = false
    /// The policy notice URLs must pass: the network's (``DestinationPolicy/forNetwork(baseURL:explicit:)``).
    var destinations: DestinationPolicy = .strict
    /// The network id, for the count of refused notices.
    var networkID: String = "bidder"
    /// What this bid's loss notices may say (the request's ``AdRequest/lossNotices``): under `reasonOnly` the price
    /// macros of a loss notice stay empty.
    var lossNotices: LossNoticeContent = .reasonAndPrice

    /// The clearing price `clearing` of this bid's win: exact, never above the bid.
    func clearing(_ clearing: Double) -> Decimal? {
        guard let bid = bidPrice else { return ExactPrice.decimal(clearing) }
        if clearing == bidNumber { return bid }  // first price: the bid itself, as it was written
        guard let value = ExactPrice.decimal(clearing) else { return bid }
        return min(value, bid)
    }

    /// The values of a win (`nurl`) or, with `impressionTime`, billing (`burl`) notice at `clearing`.
    func won(_ clearing: Double, impressionTime: Date? = nil) -> NoticeValues {
        let price = self.clearing(clearing)
        var ratio: Decimal? = nil
        if let price, let bid = bidPrice, bid > 0 { ratio = ExactPrice.truncated(price / bid, scale: 6) }
        return NoticeValues(price: price, marketBidRatio: ratio, impressionTime: impressionTime)
    }

    /// The values of a loss notice for `reason`, the winner having cleared at `winningPrice` (when known and when
    /// ``lossNotices`` lets a loser hear it).
    func lost(_ reason: AuctionLossReason, winningPrice: Decimal?) -> NoticeValues {
        let winningPrice = lossNotices == .reasonOnly ? nil : winningPrice
        var minimum: Decimal? = nil
        if let winningPrice, reason == .lostToHigherBid, !secondPrice { minimum = winningPrice + ExactPrice.increment }
        return NoticeValues(price: winningPrice, loss: reason, minimumToWin: minimum)
    }

    /// `url` with every standard macro of OpenRTB 2.6 §4.4 replaced: by its value where known (percent-encoded for a
    /// query), by an empty string where not. Other `${…}` text is left as it is.
    func substitute(_ url: String, _ notice: NoticeValues) -> String {
        guard url.contains("${") else { return url }
        func price(_ value: Decimal?) -> String { value.map(ExactPrice.text) ?? "" }
        var impressionTime = ""
        if let time = notice.impressionTime?.timeIntervalSince1970, time.isFinite, time >= 0, time < 1e14 {
            impressionTime = String(Int64((time * 1000).rounded(.down)))
        }
        let values: [Substring: String] = [
            "AUCTION_ID": QueryString.encode(auctionID),
            "AUCTION_BID_ID": QueryString.encode(bidID),
            "AUCTION_IMP_ID": QueryString.encode(impID),
            "AUCTION_SEAT_ID": QueryString.encode(seat),
            "AUCTION_AD_ID": QueryString.encode(adID),
            "AUCTION_PRICE": price(notice.price),
            "AUCTION_CURRENCY": "USD",
            "AUCTION_MBR": price(notice.marketBidRatio),
            "AUCTION_LOSS": notice.loss.map { String($0.code) } ?? "",
            "AUCTION_MIN_TO_WIN": price(notice.minimumToWin),
            "AUCTION_MULTIPLIER": "",
            "AUCTION_IMP_TS": impressionTime,
            "AUCTION_DISCOUNT_PCT": "",
            "AUCTION_DISCOUNT_CPM": "",
        ]
        var text = ""
        var rest = url[...]
        while let open = rest.range(of: "${") {
            text += rest[..<open.lowerBound]
            guard let close = rest[open.upperBound...].firstIndex(of: "}") else {
                rest = rest[open.lowerBound...]
                break
            }
            let name = rest[open.upperBound..<close]
            if let value = values[name] {
                text += value
            } else {
                text += rest[open.lowerBound...close]
            }
            rest = rest[rest.index(after: close)...]
        }
        text += rest
        return text
    }

    /// Whether a notice URL from a bid may be fetched: at most 4096 bytes, and allowed by ``destinations`` (https to
    /// public hosts unless the network's configuration allows more). A refused notice is logged and counted with its
    /// reason and not sent; the bid stays usable.
    func isFetchable(_ url: String) -> Bool {
        guard url.utf8.count <= 4096 else { return false }
        return destinations.optional(url, as: .notice, network: networkID) != nil
    }
}

/// The values of OpenRTB 2.6 §4.4 notice macros that one notice fixes; nil is unknown (an empty string on the wire).
struct NoticeValues: Sendable {
    /// `${AUCTION_PRICE}`: the clearing price.
    var price: Decimal? = nil
    /// `${AUCTION_LOSS}`.
    var loss: AuctionLossReason? = nil
    /// `${AUCTION_MBR}`: clearing price / bid price.
    var marketBidRatio: Decimal? = nil
    /// `${AUCTION_MIN_TO_WIN}`: the lowest bid that would have won.
    var minimumToWin: Decimal? = nil
    /// `${AUCTION_IMP_TS}`: when the impression was rendered.
    var impressionTime: Date? = nil

    /// A notice with no known value but `loss` (a bid discarded before the auction).
    static func discarded(_ reason: AuctionLossReason) -> NoticeValues { NoticeValues(loss: reason) }
}

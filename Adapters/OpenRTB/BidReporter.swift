import AdMediation
import AdTransport
import AdapterKit
import AdapterSupport
import Foundation
import Synchronization

extension AdFormat {
    var bannerSize: BannerSize? {
        if case .banner(let size) = self { return size }
        return nil
    }

    var isFullScreen: Bool { self == .interstitial || self == .rewarded }
}

/// What a served bid needs for its notices.
struct BidData: Sendable {
    var context: NoticeContext
    var price: Double
    var nurl: String?
    var burl: String?
    var lurl: String?
    /// The loss notice of the fill's seat, sent with the win notice (on a loss, the fill's own notice is the seat's).
    var seatLoss: SeatLoss?
}

/// The loss notice a seat's best-ranked losing bid carries.
struct SeatLoss: Sendable {
    /// Why the bid lost.
    enum Reason: Sendable {
        /// A valid bid under the answer's best.
        case outbid
        /// Discarded before the auction, for this reason.
        case discarded(AuctionLossReason)
    }

    var url: String?
    var context: NoticeContext
    var reason: Reason

    init(url: String?, context: NoticeContext, _ reason: Reason) {
        self.url = url
        self.context = context
        self.reason = reason
    }
}

/// A served bid's events: the billing notice on the first impression (refused after `exp`), handed to the bounded
/// notice sender like every other notice (``AdEventDelivery/queued``: a slow billing endpoint never holds the
/// impression); win or loss when the auction settles.
struct BidReporter: AdEventReporter {
    let data: BidData
    let clock: any AdClock
    let notices: NoticeSender

    func deliver(_ record: AdEventRecord) async throws -> AdEventDelivery {
        let ad = record.ad
        guard record.event == .impression else { return .notSent }
        if ad.isExpired(at: clock.now - record.age) {
            throw AdError(
                .invalidState,
                "the bid \(data.context.bidID) of \(ad.networkID) has expired; an expired bid is never shown")
        }
        guard let burl = data.burl else { return .notSent }
        var price = data.price
        if case .won(let clearing) = ad.auctionResult { price = clearing }
        let shownAt = Date().addingTimeInterval(-record.age.seconds)
        let values = data.context.won(price, impressionTime: shownAt)
        guard data.context.isFetchable(data.context.substitute(burl, values)) else { return .notSent }
        guard notices.send(burl, context: data.context, values) else {
            throw AdError(
                .network,
                "the billing notice of bid \(data.context.bidID) was dropped: the notice queue is full or ended")
        }
        return .queued
    }

    func settle(_ result: AuctionResult, for ad: LoadedAd) {
        switch result {
        case .won(let clearing):
            notices.send(data.nurl, context: data.context, data.context.won(clearing))
            guard let seatLoss = data.seatLoss else { return }
            switch seatLoss.reason {
            case .outbid:
                notices.send(
                    seatLoss.url, context: seatLoss.context,
                    seatLoss.context.lost(.lostToHigherBid, winningPrice: data.context.clearing(clearing)))
            case .discarded(let reason):
                notices.send(seatLoss.url, context: seatLoss.context, .discarded(reason))
            }
        case .lost(let reason, let winningPrice):
            notices.send(
                data.lurl, context: data.context,
                data.context.lost(reason, winningPrice: winningPrice.flatMap(ExactPrice.decimal)))
        }
    }
}

import AdMediation
import AdTransport
import AdapterKit
import AdapterSupport
import Foundation
import Synchronization

/// A real-time bidder speaking the OpenRTB 2.6 subset of `specs/openrtb-bidder.md`, as an ``AdNetwork`` whose fills
/// are priced bids.
///
/// A load sends one auction request (`POST {base}/openrtb2/auction`) with one impression for `request.placement` (its
/// `tagid`), the auction type (`at`), the request's floor as `bidfloor`, `tmax` from the time left, and every privacy
/// signal in the 2.6 fields of `regs`/`user`/`device`. The best valid bid fills; a bid that breaks the contract
/// (another auction id, an unknown impression, a price that is not finite, negative, under the floor, a size other
/// than the banner's, a markup type (`mtype`) the impression did not offer, another currency, no markup, or already
/// expired) is discarded: the answer is a no fill whose reason says why when no bid is left, and the bid's loss notice
/// carries the standard's reason.
///
/// Notices: ``LoadedAd/settleAuction(_:)`` sends the win notice (`nurl`) or the loss notice (`lurl`); the first
/// reported impression sends the billing notice (`burl`), and is refused once the bid's `exp` has passed. Each notice
/// is sent at most once, with every standard macro of OpenRTB 2.6 §4.4 substituted (an empty string where the value is
/// not known) and prices as exact decimals, a winner's never above its bid; a request whose `AdRequest.lossNotices`
/// is `reasonOnly` gets loss notices with the reason and no price. An answer sends at most one loss notice per seat,
/// carried by the seat's best-ranked losing bid (valid bids by price, then discarded ones in answer order),
/// for at most ``Configuration/maxLossNoticesPerAnswer`` seats; the fill's own seat is told when the auction settles
/// (on a win, its runner-up's loss notice goes with the win notice; on a loss, only the fill's). Win and loss notices
/// go through the network's own bounded background sender (``Configuration/noticeQueueLimit`` waiting,
/// ``Configuration/noticeConcurrency`` in flight, each within ``Configuration/noticeDeadline``), never holding an
/// answer; ``shutdown()`` lets it drain for at most ``Configuration/noticeShutdownGrace``, then cancels the rest.
public final class BiddingNetwork: AdNetwork, BackgroundWork {
    /// Settings of the bidder.
    public struct Configuration: Sendable {
        /// The network id used in mediation. Default `bidder`.
        public var id: String = "bidder"
        /// The bidder's base URL (the path `/openrtb2/auction` is appended).
        public var baseURL: String
        /// The formats asked for: `banner`, `interstitial`, `rewarded`. Default all three.
        public var formats: Set<AdFormat.Kind> = [.banner, .interstitial, .rewarded]
        /// The app's bundle id (`app.bundle`).
        public var appBundle: String = "com.example.app"
        /// The app's id with the exchange (`app.id`), if any.
        public var appID: String? = nil
        /// The device's advertising id (`device.ifa`): sent only when tracking is allowed (`lmt: 0`).
        public var advertisingID: String? = nil
        /// The user limited ad tracking (`device.lmt: 1`). COPPA and under-age requests always limit it.
        public var limitAdTracking: Bool = false
        /// The exchange's id in the IAB Global Vendor List, for the mediator's TCF checks (nil: none declared).
        public var tcfVendorID: Int? = nil
        /// The full-screen size sent for interstitial and rewarded video (`video.w`/`h`). Default 1080×1920.
        public var fullScreenSize = BannerSize(width: 1080, height: 1920)
        /// Kept back from the time left when computing `tmax`, for the trip back. Default 50 ms.
        public var tmaxMargin: Duration = .milliseconds(50)
        /// The time a load may take when the request sets none. Default 500 ms.
        public var defaultTimeout: Duration = .milliseconds(500)
        /// A bid's validity when it has no `exp`. Default 300 s (the standard's).
        public var defaultExpiry: Duration = .seconds(300)
        /// The longest validity honoured, whatever `exp` says. Default 1 hour.
        public var maximumExpiry: Duration = .seconds(3600)
        /// Attempts per win or loss notice (the first and its retries, 1…10). Default 3.
        public var noticeAttempts: Int = 3
        /// The timeout of one notice request (one attempt). Default 2 s.
        public var noticeTimeout: Duration = .seconds(2)
        /// All attempts of one notice together, backoffs included: no retry starts after it. Default 5 s.
        public var noticeDeadline: Duration = .seconds(5)
        /// Notices waiting to be sent (beyond those in flight); more are dropped and counted
        /// (``BiddingNetwork/droppedNotices``). Default 64, at least 1.
        public var noticeQueueLimit: Int = 64
        /// Notices in flight at once. Default 4, at least 1.
        public var noticeConcurrency: Int = 4
        /// How long ``BiddingNetwork/shutdown()`` waits for queued notices, on the network's clock, before cancelling
        /// them (counted as dropped). Default 2 s.
        public var noticeShutdownGrace: Duration = .seconds(2)
        /// Seats of one answer told of their loss when the answer is read (one notice each, best-ranked seats first;
        /// the fill's seat, told when the auction settles, aside). Default 16.
        public var maxLossNoticesPerAnswer: Int = 16
        /// The auction type announced in requests (`at`): first price (1) or second price (2). Nil (the default): the
        /// type of the auction the request takes part in (``AdRequest/auction``, which a ``Mediator`` sets from its
        /// placement), first price for a request that names none. A type set here that contradicts the mediator's is
        /// a configuration error naming it (the bidder would be told one price rule and charged by another).
        public var auction: AuctionType? = nil
        /// The auction type of particular bidder placements (`tagid`), overriding ``auction``; the same rule.
        public var placementAuctions: [String: AuctionType] = [:]
        /// Where notice URLs (`nurl`, `burl`, `lurl`) from bids may go; nil: https to public hosts, or also http and
        /// loopback when ``baseURL`` is loopback (``DestinationPolicy/forNetwork(baseURL:explicit:)``).
        public var destinations: DestinationPolicy? = nil

        /// Creates a configuration for `baseURL`.
        public init(baseURL: String) { self.baseURL = baseURL }

        /// The auction type of a request for `request.placement`: the mediator's when it names one (a configured type
        /// that contradicts it is a configuration error naming the setting), else the configured one, else first
        /// price.
        func auction(for request: AdRequest) throws(AdError) -> AuctionType {
            let (own, field): (AuctionType?, String) =
                if let own = placementAuctions[request.placement] {
                    (own, "placement_auctions[\"\(request.placement)\"]")
                } else {
                    (auction, "auction")
                }
            guard let mediated = request.auction else { return own ?? .firstPrice }
            if let own, own != mediated {
                throw AdError(
                    .configuration,
                    "\(field) is \(own.rawValue) but the mediated placement clears at \(mediated.rawValue): "
                        + "remove it or make the two agree")
            }
            return mediated
        }
    }

    /// The network id.
    public var id: String { configuration.id }
    /// The configured formats, priced.
    public let capabilities: AdNetworkCapabilities
    private let configuration: Configuration
    private let http: any HTTPClient
    private let clock: any AdClock
    private let notices: NoticeSender

    /// Creates the bidder. Nothing starts here: its notice sender starts its task with the first notice and runs until
    /// ``shutdown()`` or until the network and every ad it served are released (an ad still to be
    /// shown keeps its billing notice's queue).
    public init(configuration: Configuration, http: any HTTPClient, clock: any AdClock = SystemAdClock()) {
        self.configuration = configuration
        self.http = http
        self.clock = clock
        self.capabilities = AdNetworkCapabilities(
            formats: configuration.formats.intersection([.banner, .interstitial, .rewarded]),
            reportsPrice: true, tcfVendorID: configuration.tcfVendorID)
        self.notices = NoticeSender(
            http: http, clock: clock,
            limits: NoticeSender.Limits(
                attempts: max(1, min(configuration.noticeAttempts, 10)), timeout: configuration.noticeTimeout,
                deadline: configuration.noticeDeadline, queue: max(1, min(configuration.noticeQueueLimit, 100_000)),
                concurrency: max(1, min(configuration.noticeConcurrency, 64)),
                shutdownGrace: max(.zero, configuration.noticeShutdownGrace)))
    }

    /// Ends the bidder, as every component's `shutdown()` does: sends the queued win and loss notices for at most
    /// ``Configuration/noticeShutdownGrace`` (on the network's clock), then cancels what is left and returns once the
    /// sender has stopped; notices settled afterwards are dropped. Idempotent.
    public func shutdown() async { await notices.shutdown() }

    /// Win and loss notices queued or in flight.
    public var pendingNotices: Int { notices.pending }

    /// Win and loss notices never sent: the queue was full (``Configuration/noticeQueueLimit``), the sender had been
    /// shut down, or the shutdown grace cut them off.
    public var droppedNotices: Int { notices.dropped }

    /// Win and loss notices sent and given up: every attempt failed, or ``Configuration/noticeDeadline`` passed.
    public var failedNotices: Int { notices.failed }

    /// Asks the bidder for `request` and returns its best valid bid as a fill, or a no fill saying why.
    public func load(_ request: AdRequest) async throws -> AdLoadResult {
        guard capabilities.supports(request.format) else {
            throw AdError(
                .unsupported,
                ("the bidder \(id) bids "
                    + "on \(capabilities.formats.map(\.rawValue).sorted().joined(separator: ", ")), not ")
                    + "\(request.format)"
            )
        }
        let timeout = request.timeout ?? configuration.defaultTimeout
        let tmax = timeout - configuration.tmaxMargin
        guard tmax >= .milliseconds(10) else {
            throw AdError(
                .timeout,
                "\(Int(timeout.milliseconds)) ms left: too little for a bid (tmax margin "
                    + "\(Int(configuration.tmaxMargin.milliseconds)) ms)"
            )
        }
        if let floor = request.floorEcpm, !(floor.isFinite && floor >= 0) {
            throw AdError(.configuration, "floor_ecpm must be a finite price ≥ 0, got \(floor)")
        }
        let auctionID = RandomID.uuidString()
        let wireRequest = OpenRTB.BidRequest(
            auctionID: auctionID, request: request, tmax: tmax, configuration: configuration,
            auction: try configuration.auction(for: request))
        let body: Data
        do {
            body = try OpenRTB.encoder.encode(wireRequest)
        } catch {
            throw AdError(.invalidState, "the bid request could not be encoded: \(error)")
        }
        let outcome = try await RequestRunner(http: http).run(
            HTTPRequest(
                method: .post, url: HTTPRequest.url(configuration.baseURL, appending: "/openrtb2/auction"),
                headers: ["Content-Type": "application/json", "x-openrtb-version": "2.6"], body: body
            ).requiring(.forNetwork(baseURL: configuration.baseURL, explicit: configuration.destinations), as: .api),
            deadline: timeout, contract: .init(noFill: [204: "no bid (204)"]))
        switch outcome {
        case .noFill(let noFill): return .noFill(noFill)
        case .body(let body): return try answer(body, auctionID: auctionID, request: wireRequest, adRequest: request)
        }
    }

    /// Decodes and validates a 200 bid response to the auction `auctionID` for `request` (for the fuzzer and tests).
    package func parse(_ body: Data, auctionID: String, request: AdRequest) throws -> AdLoadResult {
        try answer(
            body, auctionID: auctionID,
            request: OpenRTB.BidRequest(
                auctionID: auctionID, request: request, tmax: .milliseconds(300),
                configuration: configuration, auction: try configuration.auction(for: request)), adRequest: request)
    }

    private func answer(_ body: Data, auctionID: String, request: OpenRTB.BidRequest, adRequest: AdRequest) throws
        -> AdLoadResult
    {
        var limits = JSONLimits()
        limits.maxBytes = OpenRTB.maxResponseBytes
        try Task.checkCancellation()
        let wire = try WireCodec.decode(
            OpenRTB.BidResponse.self, from: body, limits: limits, what: "the bid response of \(id)")
        let bids = (wire.seatbid ?? []).flatMap { seat in (seat.bid ?? []).map { (seat: seat.seat, bid: $0) } }
        let unreadable = (wire.seatbid ?? []).reduce(0) { $0 + $1.unreadable }
        if bids.isEmpty && unreadable > 0 {
            return .noFill(NoFill(reason: "invalid bid: \(unreadable) bid(s) not JSON objects"))
        }
        if bids.isEmpty {
            let reason =
                wire.nbr.flatMap { OutsideValue.integer($0, in: 0...100_000) }.map { "no bid (nbr \($0))" } ?? "no bid"
            return .noFill(NoFill(reason: reason))
        }
        let now = clock.now
        var valid: [(bid: OpenRTB.Bid, seat: String?, expiry: Duration)] = []
        var rejections: [String] = []
        let secondPrice = request.at == 2
        func context(_ bid: OpenRTB.Bid, seat: String?) -> NoticeContext {
            NoticeContext(
                auctionID: auctionID, bidID: wire.bidid ?? bid.id ?? "", impID: bid.impid ?? "", seat: seat ?? "",
                adID: bid.adid ?? "", bidPrice: Self.exactPrice(of: bid), bidNumber: bid.price,
                secondPrice: secondPrice,
                destinations: .forNetwork(baseURL: configuration.baseURL, explicit: configuration.destinations),
                networkID: id, lossNotices: adRequest.lossNotices)
        }
        var discarded: [(bid: OpenRTB.Bid, seat: String?, rejection: Rejection)] = []
        for (seat, bid) in bids {
            switch validate(bid, responseID: wire.id, currency: wire.cur, auctionID: auctionID, request: request) {
            case .success(let expiry):
                valid.append((bid, seat, expiry))
            case .failure(let rejection):
                rejections.append(rejection.why)
                discarded.append((bid, seat, rejection))
            }
        }
        if unreadable > 0 { rejections.append("\(unreadable) bid(s) not JSON objects") }
        let overCap = wire.bidsOverCap + wire.seatsOverCap
        if overCap > 0 {
            rejections.append(
                "\(wire.bidsOverCap) bid(s) and \(wire.seatsOverCap) seat(s) past the caps "
                    + "(\(OpenRTB.maxBidsPerSeat) bids per seat, \(OpenRTB.maxSeats) seats) ignored")
        }
        // A stable ranking: by price, then in answer order.
        valid = valid.enumerated().sorted {
            let (left, right) = ($0.element.bid.price ?? 0, $1.element.bid.price ?? 0)
            return left != right ? left > right : $0.offset < $1.offset
        }.map(\.element)
        let bestContext = valid.first.map { context($0.bid, seat: $0.seat) }
        // One loss notice per seat: its best-ranked losing bid (valid losers by price, then discarded bids in answer
        // order) carries it. The fill's seat is told when the auction settles.
        var losers: [(bid: OpenRTB.Bid, seat: String?, reason: SeatLoss.Reason)] = []
        for other in valid.dropFirst() { losers.append((other.bid, other.seat, .outbid)) }
        for other in discarded { losers.append((other.bid, other.seat, .discarded(other.rejection.reason))) }
        let fillSeat = valid.first.map { $0.seat ?? "" }
        var seatLoss: SeatLoss? = nil
        var told: Set<String> = []
        for loser in losers {
            let seat = loser.seat ?? ""
            if seat == fillSeat {
                if seatLoss == nil {
                    seatLoss = SeatLoss(
                        url: loser.bid.lurl, context: context(loser.bid, seat: loser.seat), loser.reason)
                }
                continue
            }
            guard told.count < configuration.maxLossNoticesPerAnswer, told.insert(seat).inserted else { continue }
            let values: NoticeValues
            switch loser.reason {
            case .outbid: values = bestContext?.lost(.lostToHigherBid, winningPrice: bestContext?.bidPrice) ?? .init()
            case .discarded(let reason): values = .discarded(reason)
            }
            notices.send(loser.bid.lurl, context: context(loser.bid, seat: loser.seat), values)
        }
        guard let best = valid.first, let price = best.bid.price, let bestContext else {
            return .noFill(NoFill(reason: "invalid bid: \(rejections.first ?? "none valid")"))
        }
        let bid = best.bid
        let size = adRequest.format.bannerSize
        var fields: [String: String] = [:]
        if let domains = bid.adomain, !domains.isEmpty { fields["adomain"] = domains.prefix(8).joined(separator: ",") }
        if let seat = best.seat { fields["seat"] = seat }
        let data = BidData(
            context: bestContext, price: price, nurl: bid.nurl, burl: bid.burl, lurl: bid.lurl, seatLoss: seatLoss)
        return .filled(
            LoadedAd(
                networkID: id,
                placement: adRequest.placement,
                format: adRequest.format,
                creative: AdCreative(
                    id: bid.crid.flatMap { $0.isEmpty ? nil : $0 } ?? bid.id ?? auctionID,
                    kind: adRequest.format.isFullScreen ? "video" : "html",
                    markup: bid.adm,
                    width: size?.width ?? bid.w.flatMap { OutsideValue.integer($0, in: 1...100_000) },
                    height: size?.height ?? bid.h.flatMap { OutsideValue.integer($0, in: 1...100_000) },
                    fields: fields),
                ecpm: price,
                loadedAt: now,
                expiresAt: now + best.expiry,
                adapterData: data,
                reporter: BidReporter(data: data, clock: clock, notices: notices),
                pricePrecision: .exact))
    }

    /// The bid's price exactly as its JSON text; failing that (beyond `Decimal`'s range), its number's shortest text.
    private static func exactPrice(of bid: OpenRTB.Bid) -> Decimal? {
        if let exact = bid.exactPrice, exact.isFinite, exact >= 0 { return exact }
        return bid.price.flatMap(ExactPrice.decimal)
    }

    /// OpenRTB's loss reason 204, "creative filtered – incorrect creative format": a bid whose `mtype` is not a
    /// format the impression offered.
    static let creativeFilteredFormat = AuctionLossReason(code: 204, name: "creative_filtered_format")

    private struct Rejection: Error {
        var why: String
        var reason: AuctionLossReason
    }

    /// The contract's checks, in order; the bid's validity on success.
    private func validate(
        _ bid: OpenRTB.Bid, responseID: String?, currency: String?, auctionID: String, request: OpenRTB.BidRequest
    ) -> Result<Duration, Rejection> {
        func reject(_ why: String, _ reason: AuctionLossReason = .invalidResponse) -> Result<Duration, Rejection> {
            .failure(Rejection(why: why, reason: reason))
        }
        guard responseID == auctionID else {
            return reject("the response's id \(Self.quoted(responseID)) is not the auction's")
        }
        guard bid.impid == "1" else { return reject("impid \(Self.quoted(bid.impid)) is not the requested impression") }
        guard let price = bid.price, price.isFinite, price >= 0, price <= 1_000_000 else {
            let shown = bid.price.map { "\($0)" } ?? (bid.priceUnreadable ? "unreadable" : "missing")
            return reject("price \(shown) is not a finite price 0…1000000")
        }
        if let floor = request.imp.first?.bidfloor, price < floor {
            return reject("price \(price) under the floor \(floor)", .belowFloor)
        }
        if let currency, currency != "USD" { return reject("currency \(Self.quoted(currency)) is not USD") }
        if let banner = request.imp.first?.banner {
            let w = bid.w.flatMap { OutsideValue.integer($0, in: 0...100_000) }
            let h = bid.h.flatMap { OutsideValue.integer($0, in: 0...100_000) }
            if (bid.w != nil && w != banner.w) || (bid.h != nil && h != banner.h) {
                return reject(
                    "size \(bid.w.map { "\($0)" } ?? "?")x\(bid.h.map { "\($0)" } ?? "?") is not the banner's "
                        + "\(banner.w)x\(banner.h)"
                )
            }
        }
        if let mtype = bid.mtype {
            // 2.6 §3.2.4: the type of the creative markup, so it can be rendered in the slot it was offered for.
            let offered = request.imp.first?.banner != nil ? 1 : 2
            let type = OutsideValue.integer(mtype, in: 1...4)
            guard type == offered else {
                let names = [1: "banner", 2: "video", 3: "audio", 4: "native"]
                let shown = type.map { "\($0) (\(names[$0] ?? "?"))" } ?? (mtype.isFinite ? "\(mtype)" : "unreadable")
                return reject(
                    "mtype \(shown) is not a format the impression offered (\(names[offered] ?? "?"))",
                    Self.creativeFilteredFormat)
            }
        }
        guard let markup = bid.adm, !markup.isEmpty else { return reject("no markup (adm)") }
        var expiry = configuration.defaultExpiry
        if let exp = bid.exp {
            guard exp.isFinite else { return reject("exp \(exp) is not a number of seconds") }
            guard exp > 0, let validity = OutsideValue.duration(seconds: exp) else {
                return reject("exp \(exp): the bid has expired", .expired)
            }
            expiry = validity
        }
        return .success(min(expiry, configuration.maximumExpiry))
    }

    static func quoted(_ text: String?) -> String {
        guard let text else { return "missing" }
        return "\"\(text.prefix(64))\""
    }
}

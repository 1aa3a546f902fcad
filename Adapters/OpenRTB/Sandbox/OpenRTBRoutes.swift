import AdMediation
import Foundation
import SandboxRouting

/// OpenRTB 2.6 bidders (`specs/openrtb-bidder.md`) in the demand sandbox, under `/openrtb/{name}`: any name is a
/// bidder, and its scenario is the network `name` (fill rate = bid rate, eCPM = bid prices, latency, faults, drift).
/// A drawn price under the request's `bidfloor` is a no bid. Bid requests and notices (`/notice/win|bill|loss`) are
/// kept in ``records``. Listed once, with the network's factory, in the registry of built-in networks
/// (`BuiltInNetworks`), which makes one per sandbox.
public struct OpenRTBRoutes: SandboxRouteModule {
    /// What the bidders received.
    public struct Records: Codable, Sendable {
        /// Bid requests (raw JSON), in order (the first 10 000).
        public var bidRequests: [String] = []
        /// Win, billing and loss notices, in order (the first 200 000).
        public var bidNotices: [BidNoticeRecord] = []

        /// No records.
        public init() {}
    }

    /// `openrtb`.
    public let network = "openrtb"
    private let log = LockedValue(Records())

    /// Creates the module, with empty records.
    public init() {}

    /// A snapshot of what the bidders received so far.
    public var records: Records { log.withLock { $0 } }

    /// ``records`` as JSON.
    public func recordsJSON() -> Data? { adminJSON(records) }

    /// Forgets ``records``.
    public func resetRecords() { log.withLock { $0 = Records() } }

    /// Answers one request under `/openrtb`.
    public func respond(to request: SandboxRequest) -> SandboxReply {
        let parts = request.path.split(separator: "/", omittingEmptySubsequences: true)
        guard parts.count >= 2, let name = parts.first.map(String.init), !name.isEmpty, name.utf8.count <= 64 else {
            return .error(404, code: "not_found", message: "no bidder route \(request.method) \(request.target)")
        }
        let route = "/" + parts.dropFirst().joined(separator: "/")
        switch (request.method, route) {
        case ("POST", "/openrtb2/auction"):
            return auction(name: name, request)
        case ("GET", "/notice/win"), ("GET", "/notice/bill"), ("GET", "/notice/loss"):
            let kind: BidNoticeRecord.Kind = route.hasSuffix("win") ? .win : route.hasSuffix("bill") ? .bill : .loss
            let notice = BidNoticeRecord(
                bidder: name, kind: kind, bidID: request.query["bid"] ?? "", price: request.query["price"],
                reason: request.query["reason"])
            log.withLock { if $0.bidNotices.count < 200_000 { $0.bidNotices.append(notice) } }
            return .empty(204)
        default:
            return .error(404, code: "not_found", message: "no bidder route \(request.method) \(route)")
        }
    }

    private func auction(name: String, _ request: SandboxRequest) -> SandboxReply {
        guard request.header("x-openrtb-version") == "2.6" else {
            return .error(400, code: "invalid_request", message: "x-openrtb-version: 2.6 is required")
        }
        guard let bidRequest = try? JSONDecoder().decode(BidRequestWire.self, from: request.body) else {
            return .error(400, code: "invalid_request", message: "not an OpenRTB bid request")
        }
        guard !bidRequest.id.isEmpty, bidRequest.imp.count == 1, let imp = bidRequest.imp.first, !imp.id.isEmpty,
            let tagid = imp.tagid, !tagid.isEmpty
        else {
            return .error(400, code: "invalid_request", message: "one imp with an id and a tagid is required")
        }
        guard let tmax = bidRequest.tmax, tmax >= 1 else {
            return .error(400, code: "invalid_request", message: "tmax is required")
        }
        let raw = String(decoding: request.body, as: UTF8.self)
        log.withLock { if $0.bidRequests.count < 10_000 { $0.bidRequests.append(raw) } }
        var options = SandboxAdOptions()
        options.privacy = raw
        options.scenarioNetwork = name
        options.floor = imp.bidfloor ?? 0
        options.noFillBody = SandboxReply.encoded(NoBid(id: bidRequest.id, nbr: 0))
        let notice = request.baseURL + "/\(name)/notice"
        let size = imp.banner ?? imp.video
        return .ad(placement: tagid, options: options) { fill in
            let bidID = "\(name)-\(fill.serial)"
            let bid = Bid(
                id: bidID, impid: imp.id, price: fill.ecpm, adm: "<div class=\"ad\">\(name) \(bidID)</div>",
                crid: "cr-\(name)-\(fill.ecpm > 3 ? "premium" : "standard")", adomain: ["advertiser.example"],
                exp: 300, nurl: "\(notice)/win?bid=\(bidID)&price=${AUCTION_PRICE}",
                burl: "\(notice)/bill?bid=\(bidID)&price=${AUCTION_PRICE}",
                lurl: "\(notice)/loss?bid=\(bidID)&price=${AUCTION_PRICE}&reason=${AUCTION_LOSS}",
                w: size?.w, h: size?.h)
            return SandboxReply.encoded(
                BidResponse(id: bidRequest.id, cur: "USD", seatbid: [.init(seat: name, bid: [bid])]))
        }
    }

    /// The bid request's fields the sandbox reads.
    private struct BidRequestWire: Decodable {
        struct Imp: Decodable {
            struct Size: Decodable {
                var w: Int
                var h: Int
            }
            var id: String
            var tagid: String?
            var bidfloor: Double?
            var banner: Size?
            var video: Size?
        }
        var id: String
        var tmax: Double?
        var imp: [Imp]
    }

    private struct NoBid: Encodable {
        var id: String
        var nbr: Int
    }

    private struct Bid: Encodable {
        var id: String
        var impid: String
        var price: Double
        var adm: String
        var crid: String
        var adomain: [String]
        var exp: Int
        var nurl: String
        var burl: String
        var lurl: String
        var w: Int?
        var h: Int?
    }

    private struct BidResponse: Encodable {
        struct SeatBid: Encodable {
            var seat: String
            var bid: [Bid]
        }
        var id: String
        var cur: String
        var seatbid: [SeatBid]
    }
}

/// One OpenRTB notice as received.
public struct BidNoticeRecord: Sendable, Codable, Hashable {
    /// The kind of notice.
    public enum Kind: String, Sendable, Codable, Hashable {
        /// `nurl`: the bid won.
        case win
        /// `burl`: the impression was billed.
        case bill
        /// `lurl`: the bid lost.
        case loss
    }
    /// The bidder's name (its path segment).
    public var bidder: String
    /// Win, bill or loss.
    public var kind: Kind
    /// The bid's id.
    public var bidID: String
    /// `${AUCTION_PRICE}` as substituted, if any.
    public var price: String?
    /// `${AUCTION_LOSS}` as substituted (loss notices).
    public var reason: String?
}

import AdapterKit
import Foundation
import Hummingbird

/// OpenRTB 2.6 bidders (`specs/openrtb-bidder.md`) under `/openrtb/{name}`: any name is a bidder, and its scenario is
/// the network `name` (fill rate = bid rate, eCPM = bid prices, latency, faults, drift). A drawn price under the
/// request's `bidfloor` is a no bid. Notices (`/notice/win|bill|loss`) are recorded.
extension SandboxState {
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

    func openRTB(_ incoming: Incoming, context: SandboxContext) async -> Response {
        let parts = incoming.path.split(separator: "/", omittingEmptySubsequences: true)
        guard parts.count >= 3, let name = parts.dropFirst().first.map(String.init), !name.isEmpty,
            name.utf8.count <= 64
        else {
            return Self.error(404, "not_found", "no bidder route \(incoming.method) \(incoming.path)")
        }
        let route = "/" + parts.dropFirst(2).joined(separator: "/")
        switch (incoming.method, route) {
        case ("POST", "/openrtb2/auction"):
            return await auction(name: name, incoming, context: context)
        case ("GET", "/notice/win"), ("GET", "/notice/bill"), ("GET", "/notice/loss"):
            let kind: BidNoticeRecord.Kind = route.hasSuffix("win") ? .win : route.hasSuffix("bill") ? .bill : .loss
            let notice = BidNoticeRecord(
                bidder: name, kind: kind, bidID: incoming.query["bid"] ?? "", price: incoming.query["price"],
                reason: incoming.query["reason"])
            record { if $0.bidNotices.count < 200_000 { $0.bidNotices.append(notice) } }
            return Self.empty(204)
        default:
            return Self.error(404, "not_found", "no bidder route \(incoming.method) \(route)")
        }
    }

    private func auction(name: String, _ incoming: Incoming, context: SandboxContext) async -> Response {
        guard incoming.header("x-openrtb-version") == "2.6" else {
            return Self.error(400, "invalid_request", "x-openrtb-version: 2.6 is required")
        }
        guard let request = try? JSONDecoder().decode(BidRequestWire.self, from: incoming.body) else {
            return Self.error(400, "invalid_request", "not an OpenRTB bid request")
        }
        guard !request.id.isEmpty, request.imp.count == 1, let imp = request.imp.first, !imp.id.isEmpty,
            let tagid = imp.tagid, !tagid.isEmpty
        else {
            return Self.error(400, "invalid_request", "one imp with an id and a tagid is required")
        }
        guard let tmax = request.tmax, tmax >= 1 else { return Self.error(400, "invalid_request", "tmax is required") }
        let raw = String(decoding: incoming.body, as: UTF8.self)
        record {
            if $0.bidRequests.count < 10_000 { $0.bidRequests.append(raw) }
            $0.adRequestPrivacy.append(raw)
        }
        let draw = self.draw(network: name, placement: tagid)
        let floor = imp.bidfloor ?? 0
        guard draw.fills, draw.ecpm >= floor else {
            if let faulted = await applyDraw(draw, validBody: Data(), context: context) { return faulted }
            return Self.json(200, Data(#"{"id":\#(Self.jsonString(request.id)),"nbr":0}"#.utf8))
        }
        let bidID = "\(name)-\(nextSerial())"
        let notice = "\(baseURL)/openrtb/\(name)/notice"
        let size = imp.banner ?? imp.video
        var bid: [String: Any] = [
            "id": bidID, "impid": imp.id, "price": draw.ecpm, "adm": "<div class=\"ad\">\(name) \(bidID)</div>",
            "crid": "cr-\(name)-\(draw.ecpm > 3 ? "premium" : "standard")", "adomain": ["advertiser.example"],
            "exp": 300,
            "nurl": "\(notice)/win?bid=\(bidID)&price=${AUCTION_PRICE}",
            "burl": "\(notice)/bill?bid=\(bidID)&price=${AUCTION_PRICE}",
            "lurl": "\(notice)/loss?bid=\(bidID)&price=${AUCTION_PRICE}&reason=${AUCTION_LOSS}",
        ]
        if let size {
            bid["w"] = size.w
            bid["h"] = size.h
        }
        let answer: [String: Any] = ["id": request.id, "cur": "USD", "seatbid": [["seat": name, "bid": [bid]]]]
        let body = JSONWriter.data(answer) ?? Data()
        if let faulted = await applyDraw(draw, validBody: body, context: context) { return faulted }
        return Self.json(200, body)
    }
}

import AdMediation
import Foundation

/// The OpenRTB 2.6 subset of `specs/openrtb-bidder.md`, as Codable wire types.
enum OpenRTB {
    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    struct BidRequest: Encodable, Sendable {
        struct Imp: Encodable, Sendable {
            struct Banner: Encodable, Sendable {
                var w: Int
                var h: Int
            }
            struct Video: Encodable, Sendable {
                var w: Int
                var h: Int
                var mimes: [String]
                var minduration: Int
                var maxduration: Int
            }
            var id: String
            var tagid: String
            var bidfloor: Double?
            var bidfloorcur: String?
            var rwdd: Int
            var instl: Int
            var banner: Banner?
            var video: Video?
        }
        struct App: Encodable, Sendable {
            var bundle: String
            var id: String?
        }
        struct Device: Encodable, Sendable {
            var lmt: Int
            var ifa: String?
        }
        struct User: Encodable, Sendable { var consent: String? }
        struct Regs: Encodable, Sendable {
            struct Ext: Encodable, Sendable {
                var gdpr: Int?
                var us_privacy: String?
            }
            var coppa: Int
            var gpp: String?
            var gpp_sid: [Int]?
            var ext: Ext?
        }
        var id: String
        var tmax: Int
        var cur: [String]
        var test: Int
        var imp: [Imp]
        var app: App
        var device: Device
        var user: User?
        var regs: Regs

        init(auctionID: String, request: AdRequest, tmax: Duration, configuration: BiddingNetwork.Configuration) {
            id = auctionID
            self.tmax = Int(min(max(tmax.milliseconds, 1), 600_000))
            cur = ["USD"]
            test = request.testMode ? 1 : 0
            var imp = Imp(
                id: "1", tagid: request.placement, bidfloor: request.floorEcpm,
                bidfloorcur: request.floorEcpm == nil ? nil : "USD",
                rwdd: request.format == .rewarded ? 1 : 0, instl: request.format.isFullScreen ? 1 : 0)
            if let size = request.format.bannerSize {
                imp.banner = .init(w: size.width, h: size.height)
            } else {
                let screen = configuration.fullScreenSize
                imp.video = .init(
                    w: screen.width, h: screen.height, mimes: ["video/mp4"], minduration: 5,
                    maxduration: request.format == .rewarded ? 30 : 15)
            }
            self.imp = [imp]
            app = App(bundle: configuration.appBundle, id: configuration.appID)
            let privacy = request.privacy
            let limited =
                configuration.limitAdTracking || privacy.restrictsPersonalData || configuration.advertisingID == nil
            device = Device(lmt: limited ? 1 : 0, ifa: limited ? nil : configuration.advertisingID)
            user = privacy.tcfConsent.map { User(consent: $0) }
            let ext = Regs.Ext(gdpr: privacy.gdprApplies.map { $0 ? 1 : 0 }, us_privacy: privacy.usPrivacy)
            regs = Regs(
                coppa: privacy.coppa ? 1 : 0, gpp: privacy.gpp,
                gpp_sid: privacy.gppSectionIDs.isEmpty ? nil : privacy.gppSectionIDs,
                ext: ext.gdpr == nil && ext.us_privacy == nil ? nil : ext)
        }
    }

    /// A bid response. Numbers are read as `Double` and checked, so `1e400` or `-1` is a reasoned rejection, not a
    /// decoding failure of the whole answer.
    struct BidResponse: Decodable, Sendable {
        var id: String?
        var cur: String?
        var nbr: Double?
        var seatbid: [SeatBid]?
    }

    struct SeatBid: Decodable, Sendable {
        var seat: String?
        var bid: [Bid]?
    }

    struct Bid: Decodable, Sendable {
        var id: String?
        var impid: String?
        var price: Double?
        var adm: String?
        var crid: String?
        var adomain: [String]?
        var w: Double?
        var h: Double?
        var exp: Double?
        var nurl: String?
        var burl: String?
        var lurl: String?
    }
}

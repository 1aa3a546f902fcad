import AdMediation
import AdapterSupport
import Foundation

/// The OpenRTB 2.6 subset of `specs/openrtb-bidder.md`, as Codable wire types.
enum OpenRTB {
    /// The most seats of one bid response that are read: a request carries one impression, and each buyer seat bids
    /// on it once or a few times (OpenRTB 2.6 §4.2.2), so 50 seats is far above any real answer; later seats are
    /// counted and ignored, never decoded, so a hostile answer costs bounded work.
    static let maxSeats = 50
    /// The most bids read per seat: Prebid Server's `multibid` allows at most 9 bids per bidder and impression.
    static let maxBidsPerSeat = 10
    /// The largest bid response: one impression's answer, inline VAST included, is tens of kilobytes; 1 MiB leaves
    /// room and bounds the scan and the parse.
    static let maxResponseBytes = 1 << 20

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
            /// Apple's App Tracking Transparency status (`device.ext.atts`, the IAB's extension for iOS 14+).
            struct Ext: Encodable, Sendable { var atts: Int }
            var lmt: Int
            var ifa: String?
            var ext: Ext?
        }
        struct User: Encodable, Sendable { var consent: String? }
        /// OpenRTB 2.6's own fields (`regs.gdpr`, `regs.us_privacy`), not 2.5's `regs.ext`.
        struct Regs: Encodable, Sendable {
            var coppa: Int
            var gdpr: Int?
            var us_privacy: String?
            var gpp: String?
            var gpp_sid: [Int]?
        }
        var id: String
        /// The auction type: 1 first price, 2 second price. Always sent: absent, the standard means 2.
        var at: Int
        var tmax: Int
        var cur: [String]
        var test: Int
        var imp: [Imp]
        var app: App
        var device: Device
        var user: User?
        var regs: Regs

        init(
            auctionID: String, request: AdRequest, tmax: Duration, configuration: BiddingNetwork.Configuration,
            auction: AuctionType
        ) {
            id = auctionID
            at = auction == .secondPrice ? 2 : 1
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
            // The privacy rules decide whether the device id may go (COPPA, under age, lmt, ATT, TCF, US opt-outs).
            // The request's advertising id (the app's), else the configuration's.
            let advertisingID = request.advertisingID ?? configuration.advertisingID
            let limited =
                configuration.limitAdTracking || privacy.restrictsPersonalData || privacy.limitAdTracking
                || !privacy.effectivePermissions.deviceIDs || advertisingID == nil
            device = Device(
                lmt: limited ? 1 : 0, ifa: limited ? nil : advertisingID,
                ext: privacy.appTracking.map { Device.Ext(atts: $0.rawValue) })
            user = privacy.tcfConsent.map { User(consent: $0) }
            regs = Regs(
                coppa: privacy.coppa ? 1 : 0, gdpr: privacy.gdprApplies.map { $0 ? 1 : 0 },
                us_privacy: privacy.usPrivacy, gpp: privacy.gpp,
                gpp_sid: privacy.gppSectionIDs.isEmpty ? nil : privacy.gppSectionIDs)
        }
    }

    /// A bid response. Every field is read on its own: a value of the wrong type is absent (and the bid then
    /// discarded with a reason), never a decoding failure of the whole answer; a bid that is not an object is dropped.
    struct BidResponse: Decodable, Sendable {
        var id: String?
        var cur: String?
        var nbr: Double?
        var seatbid: [SeatBid]?
        /// The bidder's id of the response (`${AUCTION_BID_ID}` in 2.6 §4.4); bounded to what a URL carries.
        var bidid: String?

        private enum Key: String, CodingKey { case id, cur, nbr, seatbid, bidid }

        init(from decoder: any Decoder) throws {
            let fields = try decoder.container(keyedBy: Key.self)
            id = fields.string(.id)
            cur = fields.string(.cur)
            nbr = fields.number(.nbr)
            bidid = fields.string(.bidid).flatMap { $0.isEmpty || $0.utf8.count > 256 ? nil : $0 }
            guard var seats = try? fields.nestedUnkeyedContainer(forKey: .seatbid) else { return }
            var decoded: [SeatBid] = []
            var read = 0
            while !seats.isAtEnd, read < OpenRTB.maxSeats {
                guard let seat = try? seats.decode(Lossy<SeatBid>.self) else { break }
                read += 1
                if let value = seat.value { decoded.append(value) }
            }
            seatbid = decoded
            // Seats past the cap are counted, never decoded.
            if let count = seats.count { seatsOverCap = max(0, count - seats.currentIndex) }
        }

        /// Seats past ``OpenRTB/maxSeats``, ignored.
        var seatsOverCap = 0
        /// Bids ignored: past ``OpenRTB/maxBidsPerSeat`` in their seat, or in a seat past the seat cap (not counted).
        var bidsOverCap: Int { (seatbid ?? []).reduce(0) { $0 + $1.bidsOverCap } }
    }

    struct SeatBid: Decodable, Sendable {
        var seat: String?
        var bid: [Bid]?
        /// Elements of `bid` that are not objects: each is discarded alone.
        var unreadable = 0

        private enum Key: String, CodingKey { case seat, bid }

        init(from decoder: any Decoder) throws {
            let fields = try decoder.container(keyedBy: Key.self)
            seat = fields.string(.seat)
            guard var entries = try? fields.nestedUnkeyedContainer(forKey: .bid) else { return }
            var decoded: [Bid] = []
            var read = 0
            while !entries.isAtEnd, read < OpenRTB.maxBidsPerSeat {
                guard let entry = try? entries.decode(Lossy<Bid>.self) else { break }
                read += 1
                if let value = entry.value { decoded.append(value) } else { unreadable += 1 }
            }
            bid = decoded
            // Bids past the cap are counted, never decoded.
            if let count = entries.count { bidsOverCap = max(0, count - entries.currentIndex) }
        }

        /// Bids past ``OpenRTB/maxBidsPerSeat``, ignored.
        var bidsOverCap = 0
    }

    struct Bid: Decodable, Sendable {
        var id: String?
        var impid: String?
        /// The price as a number, for the checks and the fill's eCPM.
        var price: Double?
        /// `price` is present but not a number a `Double` holds (a string, `1e400`, an object…).
        var priceUnreadable = false
        /// The price exactly as its JSON text (up to 38 digits, beyond them truncated), for notices.
        var exactPrice: Decimal?
        var adid: String?
        var adm: String?
        var crid: String?
        var adomain: [String]?
        var w: Double?
        var h: Double?
        var exp: Double?
        /// The markup's type (2.6 §3.2.4): 1 banner, 2 video, 3 audio, 4 native. Present but not a finite number: NaN.
        var mtype: Double?
        var nurl: String?
        var burl: String?
        var lurl: String?

        private enum Key: String, CodingKey {
            case id, impid, price, adid, adm, crid, adomain, w, h, exp, mtype, nurl, burl, lurl
        }

        init(from decoder: any Decoder) throws {
            let fields = try decoder.container(keyedBy: Key.self)
            id = fields.string(.id)
            impid = fields.string(.impid)
            price = (try? fields.decodeIfPresent(Double.self, forKey: .price)) ?? nil
            priceUnreadable =
                price == nil && fields.contains(.price) && (try? fields.decodeNil(forKey: .price)) == false
            exactPrice = (try? fields.decodeIfPresent(Decimal.self, forKey: .price)) ?? nil
            adid = fields.string(.adid)
            adm = fields.string(.adm)
            crid = fields.string(.crid)
            adomain = ((try? fields.decodeIfPresent([Lossy<String>].self, forKey: .adomain)) ?? nil)?
                .compactMap(\.value)
            w = fields.number(.w)
            h = fields.number(.h)
            exp = (try? fields.decodeIfPresent(Double.self, forKey: .exp)) ?? nil
            let mtypeIsNull = (try? fields.decodeNil(forKey: .mtype)) ?? true
            mtype = fields.contains(.mtype) && !mtypeIsNull ? fields.number(.mtype) ?? .nan : nil
            nurl = fields.string(.nurl)
            burl = fields.string(.burl)
            lurl = fields.string(.lurl)
        }
    }
}

import AdMediation
import AdMediationTesting
import AdTransport
import Foundation

/// A bidder under test: a network whose fills are priced bids with an expiry, the wire it sends through, a request
/// it bids on, and the manual clock it reads (so expiry is tested without waiting).
public struct BidderSubject: Sendable {
    /// The bidder.
    public var network: any AdNetwork
    /// What reached its wire.
    public var wire: any WireProbe
    /// A request it bids on (with a `timeout`).
    public var bidRequest: AdRequest
    /// The clock the bidder was created with.
    public var clock: ManualAdClock
    /// A floor it can meet with some of its bids (its bids under it must be absent or discarded). Default 1.
    public var floor: Double
    /// How long to wait for notices that are sent in the background. Default 2 s.
    public var noticeWait: Duration

    /// Describes a bidder subject.
    public init(
        network: any AdNetwork, wire: any WireProbe, bidRequest: AdRequest, clock: ManualAdClock, floor: Double = 1,
        noticeWait: Duration = .seconds(2)
    ) {
        self.network = network
        self.wire = wire
        self.bidRequest = bidRequest
        self.clock = clock
        self.floor = floor
        self.noticeWait = noticeWait
    }

    /// The ad's auction was settled by the mediator that loaded it (``through(_:)``): the kit's own settlements are
    /// refused.
    var settlesOnLoad = false

    /// The same subject with every bid going by `path`: the bid request becomes a mediated placement (id
    /// `conformance`, the bid request's format) whose only bidder is the network at the bid request's placement, in a
    /// first-price auction (10 s bidder timeout and deadline, so the kit, not the mediator, judges time), on the
    /// subject's clock. Throws the mediator's configuration error.
    public func through(_ path: ConformancePath) throws -> BidderSubject {
        guard path != .bare else { return self }
        let timeout = bidRequest.timeout ?? .seconds(10)
        let bidder = BidderLine(network: network.id, placement: bidRequest.placement, timeout: timeout)
        let placement = PlacementConfiguration(
            format: bidRequest.format, lines: [], deadline: .seconds(10), bidders: [bidder], auction: .firstPrice)
        let mediator = try ConformancePath.mediator(path, over: network, placement: placement, clock: clock)
        var request = bidRequest
        request.placement = "conformance"
        request.auction = nil
        var subject = BidderSubject(
            network: mediator, wire: wire, bidRequest: request, clock: clock, floor: floor, noticeWait: noticeWait)
        subject.settlesOnLoad = true
        return subject
    }
}

/// The bidder scenarios of the conformance kit (`specs/openrtb-bidder.md`): a bid is priced and expires, an expired
/// bid is never shown, notices go once, the floor is respected, `tmax` fits the time given. Run them after
/// ``AdNetworkConformance/runAll(_:)``, which checks the rules every network follows.
public enum BidderConformance {
    /// Every scenario with its name, in order.
    public static let scenarios: [(name: String, run: @Sendable (BidderSubject) async throws -> Void)] = [
        ("bidsArePricedAndExpire", bidsArePricedAndExpire),
        ("expiredBidIsNeverShown", expiredBidIsNeverShown),
        ("noticesAreSentOnce", noticesAreSentOnce),
        ("floorIsRespected", floorIsRespected),
        ("tmaxIsRespected", tmaxIsRespected),
    ]

    /// The scenarios about a bid once loaded (its price and expiry, its notices), which hold however it reached the
    /// app: ``runAll(_:)`` runs them on the bidder's own ad, through a `Mediator` and through a `Mediator` nested in
    /// another (``BidderSubject/through(_:)``). The floor and `tmax` are the bidder's own wire.
    public static let pathScenarios: [(name: String, run: @Sendable (BidderSubject) async throws -> Void)] = [
        ("bidsArePricedAndExpire", bidsArePricedAndExpire),
        ("expiredBidIsNeverShown", expiredBidIsNeverShown),
        ("noticesAreSentOnce", noticesAreSentOnce),
    ]

    /// How many results ``runAll(_:)`` gives: every scenario on the bidder, and the path scenarios again through a
    /// mediator and through a nested one.
    public static var resultCount: Int { scenarios.count + 2 * pathScenarios.count }

    /// Runs every scenario on the bidder, then the path scenarios through a `Mediator` and through a nested one
    /// (named `"… (mediated)"` and `"… (nested)"`).
    public static func runAll(_ subject: BidderSubject) async -> [ConformanceResult] {
        var results = await AdNetworkConformance.run(scenarios, on: subject)
        for path in [ConformancePath.mediated, .nested] {
            let named = pathScenarios.map { (name: "\($0.name) (\(path.rawValue))", run: $0.run) }
            do {
                results += await AdNetworkConformance.run(named, on: try subject.through(path))
            } catch {
                let failure = { (name: String) in
                    ConformanceFailure(scenario: name, expectation: "a mediator over the bidder", observed: "\(error)")
                }
                results += named.map { ConformanceResult(scenario: $0.name, status: .failed(failure($0.name))) }
            }
        }
        return results
    }

    /// A bid carries a finite price of at least 0 and an expiry after its load.
    @Sendable public static func bidsArePricedAndExpire(_ subject: BidderSubject) async throws {
        let name = "bidsArePricedAndExpire"
        let ad = try await bid(subject, name)
        defer { ad.invalidate() }
        guard let price = ad.ecpm, price.isFinite, price >= 0 else {
            throw ConformanceFailure(
                scenario: name, expectation: "a finite price ≥ 0", observed: "\(ad.ecpm.map { "\($0)" } ?? "no price")")
        }
        guard let expiry = ad.expiresAt, expiry > ad.loadedAt else {
            throw ConformanceFailure(
                scenario: name, expectation: "an expiry after the load",
                observed: "\(ad.expiresAt.map { "\($0)" } ?? "none")")
        }
    }

    /// Once its expiry has passed, a bid's impression is refused and nothing is sent.
    @Sendable public static func expiredBidIsNeverShown(_ subject: BidderSubject) async throws {
        let name = "expiredBidIsNeverShown"
        let ad = try await bid(subject, name)
        defer { ad.invalidate() }
        guard let expiry = ad.expiresAt else {
            throw ConformanceFailure(scenario: name, expectation: "an expiry", observed: "none")
        }
        await subject.clock.advance(to: expiry)
        // Through a mediator the auction was settled at load: its win notice goes first, in the background.
        let before = subject.settlesOnLoad ? await quiet(subject) : subject.wire.requestCount
        do {
            try await ad.report(.impression)
            throw ConformanceFailure(
                scenario: name, expectation: "the impression of an expired bid to be refused",
                observed: "it was reported")
        } catch is AdError {
        }
        try await Task.sleep(for: .milliseconds(150))
        if subject.wire.requestCount != before {
            throw ConformanceFailure(
                scenario: name, expectation: "nothing sent for an expired bid",
                observed: "\(subject.wire.requestCount - before) request(s)")
        }
    }

    /// Settling the auction twice and reporting the impression twice send what one settlement and one impression send.
    @Sendable public static func noticesAreSentOnce(_ subject: BidderSubject) async throws {
        let name = "noticesAreSentOnce"
        let ad = try await bid(subject, name)
        defer { ad.invalidate() }
        let price = ad.ecpm ?? 0
        // Through a mediator the auction was settled at load (a win at the clearing price): the kit's first
        // settlement is then a repeat, refused like the second.
        let before = subject.settlesOnLoad ? await quiet(subject) : subject.wire.requestCount
        let firstSettle =
            subject.settlesOnLoad
            ? ad.auctionResult != nil && !ad.settleAuction(.won(clearingPrice: price))
            : ad.settleAuction(.won(clearingPrice: price))
        let firstShow = try await ad.report(.impression)
        let settled = await quiet(subject)
        let secondSettle =
            ad.settleAuction(.won(clearingPrice: price))
            || ad.settleAuction(.lost(reason: .lostToHigherBid, winningPrice: price))
        let secondShow = try await ad.report(.impression)
        let after = await quiet(subject)
        if !firstSettle || !firstShow || secondSettle || secondShow {
            throw ConformanceFailure(
                scenario: name, expectation: "the first settlement and impression delivered, repeats refused",
                observed: "settle \(firstSettle)/\(secondSettle), impression \(firstShow)/\(secondShow)")
        }
        if settled - before > 2 || after != settled {
            throw ConformanceFailure(
                scenario: name, expectation: "at most a win and a billing notice, nothing for repeats",
                observed: "\(settled - before) request(s), then \(after - settled)")
        }
    }

    /// With a floor, every bid is at or above it, and the floor is on the wire.
    @Sendable public static func floorIsRespected(_ subject: BidderSubject) async throws {
        let name = "floorIsRespected"
        var request = subject.bidRequest
        request.floorEcpm = subject.floor
        for _ in 0..<10 {
            let before = subject.wire.requestCount
            let result = try await subject.network.load(request)
            result.ad?.invalidate()
            if let price = result.ad?.ecpm, price < subject.floor {
                throw ConformanceFailure(
                    scenario: name, expectation: "no bid under the floor \(subject.floor)",
                    observed: "a bid at \(price)")
            }
            let sent = subject.wire.requestTexts.dropFirst(before).joined()
            if number(after: "bidfloor", in: sent) != subject.floor {
                throw ConformanceFailure(
                    scenario: name, expectation: "bidfloor \(subject.floor) on the wire",
                    observed: String(sent.prefix(300)))
            }
        }
    }

    /// `tmax` is positive and under the time the request allows.
    @Sendable public static func tmaxIsRespected(_ subject: BidderSubject) async throws {
        let name = "tmaxIsRespected"
        guard let timeout = subject.bidRequest.timeout else {
            throw ConformanceFailure(scenario: name, expectation: "a bid request with a timeout", observed: "none")
        }
        let before = subject.wire.requestCount
        let result = try await subject.network.load(subject.bidRequest)
        result.ad?.invalidate()
        let sent = subject.wire.requestTexts.dropFirst(before).joined()
        guard let value = number(after: "tmax", in: sent), let tmax = OutsideValue.integer(value, in: 0...Int.max)
        else {
            throw ConformanceFailure(
                scenario: name, expectation: "a tmax on the wire", observed: String(sent.prefix(300)))
        }
        if !(1...Int(timeout.milliseconds)).contains(tmax) {
            throw ConformanceFailure(
                scenario: name, expectation: "tmax within 1…\(Int(timeout.milliseconds)) ms", observed: "\(tmax)")
        }
    }

    private static func bid(_ subject: BidderSubject, _ name: String) async throws -> LoadedAd {
        let result: AdLoadResult
        do { result = try await subject.network.load(subject.bidRequest) } catch {
            throw ConformanceFailure(
                scenario: name, expectation: "the bid request to be answered", observed: "an error: \(error)")
        }
        guard let ad = result.ad else {
            throw ConformanceFailure(scenario: name, expectation: "a bid", observed: "no bid")
        }
        return ad
    }

    /// Waits until the wire has been still for 150 ms (plus the measured slack), at most `noticeWait`; returns the
    /// request count.
    private static func quiet(_ subject: BidderSubject) async -> Int {
        await AdNetworkConformance.quiet(subject.wire, period: .milliseconds(150), bound: subject.noticeWait)
    }
}

extension BidderConformance {
    /// The number of the first JSON field `name` in `text` (`"tmax": 350` → 350).
    static func number(after name: String, in text: String) -> Double? {
        guard let range = text.range(of: "\"\(name)\"\\s*:\\s*-?[0-9][0-9.eE+-]*", options: .regularExpression) else {
            return nil
        }
        let match = text[range]
        guard let colon = match.firstIndex(of: ":") else { return nil }
        return Double(match[match.index(after: colon)...].trimmingCharacters(in: .whitespaces))
    }
}

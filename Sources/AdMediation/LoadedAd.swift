import Synchronization

/// What a loaded ad shows. Rendering is the app's job; these are the fields it needs.
public struct AdCreative: Hashable, Sendable {
    /// The network's id for the ad or creative.
    public var id: String
    /// The kind of creative (`image`, `video`, `html`, `native`, `app_install`, …).
    public var kind: String
    /// The main asset (image or video URL), if any.
    public var assetURL: String?
    /// Where a click goes, if any.
    public var clickURL: String?
    /// Inline markup, if any.
    public var markup: String?
    /// Width in points, if known.
    public var width: Int?
    /// Height in points, if known.
    public var height: Int?
    /// Further text fields (title, sponsor, call to action, …).
    public var fields: [String: String]
    /// A disclosure the app must show with the ad, whatever its format (GrowthCat: "Sponsored", on every format by
    /// App Store policy); nil when the network asks for none. Set it after creating the creative.
    public var disclosureLabel: String? = nil

    /// Creates a creative.
    public init(
        id: String,
        kind: String,
        assetURL: String? = nil,
        clickURL: String? = nil,
        markup: String? = nil,
        width: Int? = nil,
        height: Int? = nil,
        fields: [String: String] = [:]
    ) {
        self.id = id
        self.kind = kind
        self.assetURL = assetURL
        self.clickURL = clickURL
        self.markup = markup
        self.width = width
        self.height = height
        self.fields = fields
    }
}

/// Delivers a loaded ad's events to its network. Adapters implement it; ``LoadedAd`` guarantees it is called
/// at most once per event, never before the ad exists and never after invalidation.
public protocol AdEventReporter: Sendable {
    /// Sends `event` for `ad` to the network.
    func report(_ event: AdEvent, for ad: LoadedAd) async throws
    /// The ad was invalidated (a late answer dropped by the mediator, expiry, replacement): release it.
    func invalidated(_ ad: LoadedAd)
    /// The auction the ad took part in ended (called at most once per ad, never after invalidation). A bidder sends its
    /// win or loss notice here; it must not block: hand the notice to the network's own sender and return.
    func auctionEnded(_ result: AuctionResult, for ad: LoadedAd)
    /// The presentation rules of `ad` when it is shown full screen (its close button, timed events and reward); nil for
    /// ``StandardFullScreenRules``. Called once per presentation, by ``LoadedAd/presentFullScreen(on:clock:)``.
    func fullScreenRules(for ad: LoadedAd) -> (any FullScreenRules)?
}

extension AdEventReporter {
    /// Does nothing by default.
    public func invalidated(_ ad: LoadedAd) {}
    /// Does nothing by default: only bidders take part in auctions.
    public func auctionEnded(_ result: AuctionResult, for ad: LoadedAd) {}
    /// None by default: the ad is shown with ``StandardFullScreenRules``.
    public func fullScreenRules(for ad: LoadedAd) -> (any FullScreenRules)? { nil }
}

/// A reporter that sends nothing; for networks without event reporting.
public struct NoEventReporter: AdEventReporter {
    /// Creates the reporter.
    public init() {}
    /// Does nothing.
    public func report(_ event: AdEvent, for ad: LoadedAd) async throws {}
}

/// A filled ad: the creative, its price and expiry, and the one way to report its events.
///
/// Thread-safe. Each event is delivered to the network at most once (a `click` per tap where the network counts
/// each); a `click` before the impression and any event after ``invalidate()`` fail with
/// ``AdError/Code/invalidState``.
public final class LoadedAd: Sendable, CustomStringConvertible {
    /// The id of the network that filled it.
    public let networkID: String
    /// The placement id it was loaded for (the network's own id).
    public let placement: String
    /// The format it fills.
    public let format: AdFormat
    /// What to show.
    public let creative: AdCreative
    /// The price in eCPM (US dollars per thousand impressions), when the network says (or, for a mediated ad, the
    /// line's publisher-defined price when the network says none).
    public let ecpm: Double?
    /// How far ``ecpm`` can be trusted: `estimated` by default when there is a price, `undefined` when there is none.
    public let pricePrecision: RevenuePrecision
    /// The waterfall line that served the ad, when a ``Mediator`` returned it.
    public let winningLine: WinningLine?
    /// When it was loaded, on the clock that loaded it.
    public let loadedAt: AdInstant
    /// When it stops being showable, on the same clock, if it expires.
    public let expiresAt: AdInstant?
    /// The adapter's own data for this served ad (for example its tracking token), carried with the ad itself so
    /// two serves of one creative never share or overwrite it. Adapters read it back with their own type.
    public let adapterData: (any Sendable)?
    private let reporter: any AdEventReporter
    private let state = Mutex(EventState())

    private struct EventState {
        var reported: Set<AdEvent> = []
        var invalidated = false
        var auction: AuctionResult?
        var presented = false
    }

    /// Creates a loaded ad. Adapters call this.
    public init(
        networkID: String,
        placement: String,
        format: AdFormat,
        creative: AdCreative,
        ecpm: Double? = nil,
        loadedAt: AdInstant,
        expiresAt: AdInstant? = nil,
        adapterData: (any Sendable)? = nil,
        reporter: any AdEventReporter = NoEventReporter(),
        pricePrecision: RevenuePrecision? = nil,
        winningLine: WinningLine? = nil
    ) {
        self.adapterData = adapterData
        self.pricePrecision = ecpm == nil ? .undefined : (pricePrecision ?? .estimated)
        self.winningLine = winningLine
        self.networkID = networkID
        self.placement = placement
        self.format = format
        self.creative = creative
        self.ecpm = ecpm
        self.loadedAt = loadedAt
        self.expiresAt = expiresAt
        self.reporter = reporter
    }

    /// What one impression of this ad earns, with its precision, network, placement and winning line (impression-level
    /// revenue, as AdMob's paid event or MAX's `didPayRevenue` report it).
    public var revenue: ImpressionRevenue {
        let value = pricePrecision == .undefined ? 0 : (ecpm ?? 0) / 1000
        return ImpressionRevenue(
            value: value.isFinite ? value : 0, precision: pricePrecision, networkID: networkID, placement: placement,
            line: winningLine)
    }

    /// Whether the ad has expired at `instant`. An ad is expired at its expiry instant exactly.
    public func isExpired(at instant: AdInstant) -> Bool {
        guard let expiresAt else { return false }
        return instant >= expiresAt
    }

    /// Whether ``invalidate()`` was called.
    public var isInvalidated: Bool { state.withLock { $0.invalidated } }

    /// The events already reported.
    public var reportedEvents: Set<AdEvent> { state.withLock { $0.reported } }

    /// Reports `event` to the network once. Returns false, sending nothing, when it was already reported.
    /// Throws ``AdError/Code/invalidState`` after invalidation or for a `click` before the ad's impression (only an ad
    /// that was seen can be clicked), or the network's error when sending fails (the event then counts as not
    /// reported, so it may be retried).
    @discardableResult
    public func report(_ event: AdEvent) async throws -> Bool {
        let first: Bool = try state.withLock { s in try Self.admit(event, into: &s, ad: self) }
        guard first else { return false }
        do {
            try await reporter.report(event, for: self)
            return true
        } catch {
            _ = state.withLock { $0.reported.remove(event) }
            throw error
        }
    }

    /// Reports `event` like ``report(_:)`` and says how far it got: ``AdEventDelivery/alreadyReported`` (nothing
    /// sent) when it was reported before, unless `repeating` (a `click` per tap, for a network that counts each tap).
    /// A reporter that is ``AdEventDelivering`` says whether the event was queued, delivered or not sent; any other is
    /// ``AdEventDelivery/reported``. Throws like ``report(_:)``.
    public func deliver(_ event: AdEvent, repeating: Bool = false) async throws -> AdEventDelivery {
        try await deliver(event, repeating: repeating, age: nil)
    }

    /// ``deliver(_:repeating:)`` for an event that happened `age` ago (at the renderer's signal), which a network that
    /// reports event times sends instead of the moment of delivery; nil: it happens now.
    public func deliver(_ event: AdEvent, repeating: Bool = false, age: Duration?) async throws -> AdEventDelivery {
        let first: Bool = try state.withLock { s in try Self.admit(event, into: &s, ad: self) }
        guard first || repeating else { return .alreadyReported }
        do {
            if let delivering = reporter as? any AdEventDelivering {
                if let age { return try await delivering.deliver(event, for: self, age: age) }
                return try await delivering.deliver(event, for: self)
            }
            try await reporter.report(event, for: self)
            return .reported
        } catch {
            if first { _ = state.withLock { $0.reported.remove(event) } }
            throw error
        }
    }

    /// The ad's one event record: nothing after invalidation, a `click` only once the impression was reported (the
    /// ad was seen: banners, tiles and app-open ads count clicks on what was on screen, never on an ad still waiting
    /// or already replaced); whether `event` is reported for the first time.
    private static func admit(_ event: AdEvent, into s: inout EventState, ad: LoadedAd) throws -> Bool {
        if s.invalidated {
            throw AdError(
                .invalidState, "event \(event) for an invalidated ad \(ad.creative.id) from \(ad.networkID)")
        }
        if event == .click, !s.reported.contains(.impression) {
            throw AdError(
                .invalidState,
                "click on ad \(ad.creative.id) from \(ad.networkID) before its impression: only a seen ad is clicked")
        }
        return s.reported.insert(event).inserted
    }

    /// How the auction ended for this ad, once ``settleAuction(_:)`` was called.
    public var auctionResult: AuctionResult? { state.withLock { $0.auction } }

    /// Tells the network how the auction ended for this ad (its win or loss notice). Only the first call counts, and
    /// nothing is sent after ``invalidate()``; returns whether this call was delivered. A mediator settles every priced
    /// ad it collected; an app that runs its own auction does the same before invalidating the losers.
    @discardableResult
    public func settleAuction(_ result: AuctionResult) -> Bool {
        let first = state.withLock { s in
            guard !s.invalidated, s.auction == nil else { return false }
            s.auction = result
            return true
        }
        if first { reporter.auctionEnded(result, for: self) }
        return first
    }

    /// The rules its adapter gives for a full-screen presentation.
    var fullScreenRules: any FullScreenRules { reporter.fullScreenRules(for: self) ?? StandardFullScreenRules() }

    /// Marks the ad as presented: throws ``AdError/Code/invalidState`` when it is invalidated or was presented before.
    func beginPresentation() throws(AdError) {
        let refusal: String? = state.withLock { s in
            if s.invalidated { return "ad \(creative.id) from \(networkID) was invalidated" }
            if s.presented { return "ad \(creative.id) from \(networkID) was already presented" }
            s.presented = true
            return nil
        }
        if let refusal { throw AdError(.invalidState, refusal) }
    }

    /// Marks the ad dead: no event may be reported after this. Idempotent.
    public func invalidate() {
        let first = state.withLock { s in
            defer { s.invalidated = true }
            return !s.invalidated
        }
        if first { reporter.invalidated(self) }
    }

    /// `"gc/home_banner creative=c1 ecpm=2.5"`.
    public var description: String {
        "\(networkID)/\(placement) creative=\(creative.id)" + (ecpm.map { " ecpm=\($0)" } ?? "")
    }
}

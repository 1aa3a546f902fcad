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

/// One event of one ad, as its network receives it: the one value the whole event path carries, from the renderer's
/// signal (or the app's call) to the adapter's reporter. Nothing on the way re-threads a field: a hop that has the
/// record has all of it.
public struct AdEventRecord: Sendable, CustomStringConvertible {
    /// What happened.
    public let event: AdEvent
    /// The ad it happened to (its identity, creative, price and adapter data).
    public let ad: LoadedAd
    /// When it happened, on the clock of the presentation that saw it (the renderer's signal); nil when the app
    /// reported the event itself without one.
    public let occurredAt: AdInstant?
    /// How long before this delivery it happened (zero: now). A network that reports event times sends its wall
    /// clock's now less this age, so a queued or late delivery keeps the signal's moment.
    public let age: Duration
    /// Which occurrence of the event this is for the ad: 1 for the first, n for the n-th tap of a network that counts
    /// each tap.
    public let occurrence: Int

    /// Creates a record (the core does; adapters receive them, and tests may build them).
    public init(event: AdEvent, ad: LoadedAd, occurredAt: AdInstant? = nil, age: Duration = .zero, occurrence: Int = 1)
    {
        self.event = event
        self.ad = ad
        self.occurredAt = occurredAt
        self.age = max(.zero, age)
        self.occurrence = max(1, occurrence)
    }

    /// The mediation facts of the ad (winning line, mediated placement, clearing price), when a ``Mediator`` chose it.
    public var mediation: MediationFacts? { ad.mediation }

    /// `"impression #1 of gc/home creative=c1 (250 ms ago)"`.
    public var description: String {
        "\(event) #\(occurrence) of \(ad)" + (age > .zero ? " (\(age) ago)" : "")
    }
}

/// What a ``Mediator`` decided about the ad it returned: set once by each mediator the ad passes through, before the
/// app sees it (the outermost decider's facts are the ones the ad shows).
public struct MediationFacts: Hashable, Sendable {
    /// The mediator's id.
    public var mediatorID: String
    /// The mediated placement the app asked for.
    public var placement: String
    /// The waterfall line or bidder that served the ad.
    public var line: WinningLine
    /// The price the ad is booked at: the clearing price of a bid, the network's price of a line, else the line's
    /// publisher-defined price.
    public var ecpm: Double?
    /// How far ``ecpm`` can be trusted.
    public var precision: RevenuePrecision

    /// Creates the facts.
    public init(
        mediatorID: String, placement: String, line: WinningLine, ecpm: Double?, precision: RevenuePrecision
    ) {
        self.mediatorID = mediatorID
        self.placement = placement
        self.line = line
        self.ecpm = ecpm
        self.precision = ecpm == nil ? .undefined : precision
    }
}

/// Delivers a loaded ad's events to its network. Adapters implement it; ``LoadedAd`` calls it with one
/// ``AdEventRecord`` per event, at most once per event (per tap for a repeating click), never for an event admitted
/// after the ad was invalidated (one admitted just before a concurrent ``LoadedAd/invalidate()`` may still arrive
/// after ``release(_:)``: a reporter that frees per-ad state in `release` must tolerate it).
///
/// One requirement per thing that happens to an ad, each taking everything there is to know: no capability is
/// discovered by a cast and no default forwards one call to another.
public protocol AdEventReporter: Sendable {
    /// Sends (or queues) the record's event to the network and says how far it got: ``AdEventDelivery/delivered``
    /// once the network accepted it, ``AdEventDelivery/queued`` when stored to be sent in the background,
    /// ``AdEventDelivery/notSent`` when the network does not track the event. Throws when sending failed (the event
    /// then counts as not reported, so it may be retried).
    func deliver(_ record: AdEventRecord) async throws -> AdEventDelivery
    /// The auction the ad took part in ended (called at most once per ad, never after release). A bidder sends its win
    /// or loss notice here; it must not block: hand the notice to the network's own sender and return.
    func settle(_ result: AuctionResult, for ad: LoadedAd)
    /// The ad is dead (a late answer dropped by the mediator, expiry, replacement, a lost auction): release what the
    /// network keeps for it. Called at most once.
    func release(_ ad: LoadedAd)
}

extension AdEventReporter {
    /// Nothing to settle by default: only bidders take part in auctions.
    public func settle(_ result: AuctionResult, for ad: LoadedAd) {}
    /// Nothing to release by default.
    public func release(_ ad: LoadedAd) {}
}

/// A reporter that sends nothing; for networks without event reporting.
public struct NoEventReporter: AdEventReporter {
    /// Creates the reporter.
    public init() {}
    /// Sends nothing: ``AdEventDelivery/notSent``.
    public func deliver(_ record: AdEventRecord) async throws -> AdEventDelivery { .notSent }
}

/// Sees an ad's delivered events without taking part in them (a mediator's pacing, caps and revenue): called after
/// the network accepted, queued or skipped the event, once per delivered occurrence. Must not block.
typealias AdEventObserver = @Sendable (AdEventRecord) -> Void

/// A filled ad: the creative, its price and expiry, and the one way to report its events.
///
/// Thread-safe. Each event is delivered to the network at most once (a `click` per tap where the network counts
/// each); a `click` before the impression and any event after ``invalidate()`` fail with
/// ``AdError/Code/invalidState``. A ``Mediator`` returns the network's own ad, annotated with its
/// ``mediation`` facts: there is one ad and one event record whoever chose it.
public final class LoadedAd: Sendable, CustomStringConvertible {
    /// The id of the network that filled it.
    public let networkID: String
    /// The network's own placement id it was loaded for.
    public let networkPlacement: String
    /// The format it fills.
    public let format: AdFormat
    /// What to show.
    public let creative: AdCreative
    /// The price the network gave (eCPM, US dollars per thousand impressions), before any mediation.
    public let networkEcpm: Double?
    /// When it was loaded, on the clock that loaded it.
    public let loadedAt: AdInstant
    /// When it stops being showable, on the same clock, if it expires.
    public let expiresAt: AdInstant?
    /// The adapter's own data for this served ad (for example its tracking token), carried with the ad itself so
    /// two serves of one creative never share or overwrite it. Adapters read it back with their own type.
    public let adapterData: (any Sendable)?
    private let networkPrecision: RevenuePrecision
    private let reporter: any AdEventReporter
    private let rules: (any FullScreenRules)?
    private let state = LockedValue(EventState())

    private struct EventState {
        var reported: Set<AdEvent> = []
        /// The impression was admitted once (the ad was seen): local truth, kept even when its delivery failed.
        var seen = false
        var occurrences: [AdEvent: Int] = [:]
        var invalidated = false
        var auction: AuctionResult?
        var presented = false
        var mediation: MediationFacts?
        var observers: [AdEventObserver] = []
    }

    /// Creates a loaded ad. Adapters call this; `fullScreenRules` are the ad's presentation rules when it is shown
    /// full screen (its close button, timed events and reward), nil for ``StandardFullScreenRules``.
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
        fullScreenRules: (any FullScreenRules)? = nil,
        pricePrecision: RevenuePrecision? = nil
    ) {
        self.adapterData = adapterData
        self.networkPrecision = ecpm == nil ? .undefined : (pricePrecision ?? .estimated)
        self.networkID = networkID
        self.networkPlacement = placement
        self.format = format
        self.creative = creative
        self.networkEcpm = ecpm
        self.loadedAt = loadedAt
        self.expiresAt = expiresAt
        self.reporter = reporter
        self.rules = fullScreenRules
    }

    /// What the outermost ``Mediator`` that chose the ad decided (nil for an ad used bare).
    public var mediation: MediationFacts? { state.withLock { $0.mediation } }

    /// The placement id: the mediated placement when a ``Mediator`` chose the ad, else the network's own.
    public var placement: String { mediation?.placement ?? networkPlacement }

    /// The price in eCPM (US dollars per thousand impressions): the mediation's booked price when a ``Mediator`` chose
    /// the ad (a bid's clearing price, or the line's publisher-defined price when the network gave none), else the
    /// network's.
    public var ecpm: Double? {
        state.withLock { s in s.mediation.map(\.ecpm) ?? networkEcpm }
    }

    /// How far ``ecpm`` can be trusted: `estimated` by default when there is a price, `undefined` when there is none.
    public var pricePrecision: RevenuePrecision {
        state.withLock { s in s.mediation.map(\.precision) ?? networkPrecision }
    }

    /// The waterfall line that served the ad, when a ``Mediator`` returned it.
    public var winningLine: WinningLine? { mediation?.line }

    /// What one impression of this ad earns, with its precision, network, placement and winning line (impression-level
    /// revenue, as AdMob's paid event or MAX's `didPayRevenue` report it).
    public var revenue: ImpressionRevenue {
        let facts = mediation
        return Self.revenue(
            ecpm: facts.map(\.ecpm) ?? networkEcpm, precision: facts?.precision ?? networkPrecision,
            networkID: networkID, placement: facts?.placement ?? networkPlacement, line: facts?.line)
    }

    static func revenue(
        ecpm: Double?, precision: RevenuePrecision, networkID: String, placement: String, line: WinningLine?
    ) -> ImpressionRevenue {
        let value = precision == .undefined ? 0 : (ecpm ?? 0) / 1000
        return ImpressionRevenue(
            value: value.isFinite ? value : 0, precision: precision, networkID: networkID, placement: placement,
            line: line)
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

    /// Reports `event` to the network once: ``deliver(_:repeating:age:occurredAt:)``, answering whether anything was
    /// sent (false when it was reported before).
    @discardableResult
    public func report(_ event: AdEvent) async throws -> Bool {
        try await deliver(event) != .alreadyReported
    }

    /// Delivers `event`, which happened `age` ago (at the renderer's signal; nil or zero: now), to the network as one
    /// ``AdEventRecord``, and says how far it got: ``AdEventDelivery/alreadyReported`` (nothing sent) when it was
    /// reported before, unless `repeating` (a `click` per tap, for a network that counts each tap). Throws
    /// ``AdError/Code/invalidState`` after invalidation or for a `click` before the ad's impression (only an ad that
    /// was seen can be clicked), or the network's error when sending fails (the event then counts as not reported, so
    /// it may be retried).
    public func deliver(
        _ event: AdEvent, repeating: Bool = false, age: Duration? = nil, occurredAt: AdInstant? = nil
    ) async throws -> AdEventDelivery {
        let admitted: (first: Bool, occurrence: Int) = try state.withLock { s in
            let first = try Self.admit(event, into: &s, ad: self)
            guard first || repeating else { return (false, 0) }
            let occurrence = (s.occurrences[event] ?? 0) + 1
            s.occurrences[event] = occurrence
            return (first, occurrence)
        }
        guard admitted.occurrence > 0 else { return .alreadyReported }
        let record = AdEventRecord(
            event: event, ad: self, occurredAt: occurredAt, age: age ?? .zero, occurrence: admitted.occurrence)
        let delivery: AdEventDelivery
        do {
            delivery = try await reporter.deliver(record)
        } catch {
            state.withLock { s in
                // Only the last occurrence admitted is given back (a later tap keeps its number), and the event
                // counts as not reported only when no other occurrence of it was admitted.
                guard s.occurrences[event] == admitted.occurrence else { return }
                s.occurrences[event] = admitted.occurrence > 1 ? admitted.occurrence - 1 : nil
                if admitted.first, s.occurrences[event] == nil { s.reported.remove(event) }
            }
            throw error
        }
        for observer in state.withLock({ $0.observers }) { observer(record) }
        return delivery
    }

    /// The ad's one event record: nothing after invalidation, a `click` only once the impression was reported (the
    /// ad was seen: banners, tiles and app-open ads count clicks on what was on screen, never on an ad still waiting
    /// or already replaced; what the user saw is local truth, so a failed impression delivery, which may be retried,
    /// never blocks the clicks); whether `event` is reported for the first time.
    private static func admit(_ event: AdEvent, into s: inout EventState, ad: LoadedAd) throws -> Bool {
        if s.invalidated {
            throw AdError(
                .invalidState, "event \(event) for an invalidated ad \(ad.creative.id) from \(ad.networkID)")
        }
        if event == .click, !s.seen {
            throw AdError(
                .invalidState,
                "click on ad \(ad.creative.id) from \(ad.networkID) before its impression: only a seen ad is clicked")
        }
        if event == .impression { s.seen = true }
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
        if first { reporter.settle(result, for: self) }
        return first
    }

    /// The rules its adapter gives for a full-screen presentation.
    var fullScreenRules: any FullScreenRules { rules ?? StandardFullScreenRules() }

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
        if first { reporter.release(self) }
    }

    // MARK: Mediation (the one ad, annotated)

    /// A mediator chose this ad: its facts become the ad's (an outer mediator's replace an inner one's), and
    /// `observer` sees every delivered event from now on.
    func annotate(_ facts: MediationFacts, observer: @escaping AdEventObserver) {
        state.withLock { s in
            s.mediation = facts
            s.observers.append(observer)
        }
    }

    /// `"gc/home_banner creative=c1 ecpm=2.5"`.
    public var description: String {
        "\(networkID)/\(placement) creative=\(creative.id)" + (ecpm.map { " ecpm=\($0)" } ?? "")
    }
}

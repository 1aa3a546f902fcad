/// How far an impression's revenue can be trusted (the labels AppLovin MAX and Chartboost Mediation use).
public enum RevenuePrecision: String, Sendable, Hashable, Codable, CaseIterable {
    /// The price the impression cleared at (a winning bid).
    case exact
    /// The network's own estimate (a waterfall line's reported eCPM).
    case estimated
    /// The price the publisher set on the waterfall line (``WaterfallLine/ecpm``), used when the network said none.
    case publisherDefined = "publisher_defined"
    /// Nobody priced the impression; its value is 0.
    case undefined
}

/// Which waterfall line (or bidder) of a mediated placement served an ad.
public struct WinningLine: Sendable, Hashable {
    /// The line's index in the placement's waterfall (0 is the highest priority), or the bidder's index in its
    /// `bidders` when ``isBid`` is true.
    public var index: Int
    /// Whether a real-time bid won (``index`` is then a bidder's index).
    public var isBid: Bool = false
    /// The line's network id.
    public var network: String
    /// The network's own placement id on that line.
    public var networkPlacement: String
    /// The placement's A/B label (``PlacementConfiguration/abLabel``), if it has one.
    public var abLabel: String?

    /// Creates the record.
    public init(index: Int, network: String, networkPlacement: String, abLabel: String? = nil) {
        self.index = index
        self.network = network
        self.networkPlacement = networkPlacement
        self.abLabel = abLabel
    }
}

/// The revenue of one impression of a loaded ad: ``LoadedAd/revenue``.
public struct ImpressionRevenue: Sendable, Hashable {
    /// The revenue of this one impression (the eCPM divided by 1000); 0 when ``precision`` is `undefined`.
    public var value: Double
    /// The currency of ``value``: the wire contracts price in US dollars.
    public var currency: String
    /// How far ``value`` can be trusted.
    public var precision: RevenuePrecision
    /// The network that served the ad.
    public var networkID: String
    /// The placement the ad was loaded for (the mediated placement when a mediator served it).
    public var placement: String
    /// The winning waterfall line, when a mediator served the ad.
    public var line: WinningLine?

    /// Creates the record.
    public init(
        value: Double, currency: String = "USD", precision: RevenuePrecision, networkID: String, placement: String,
        line: WinningLine? = nil
    ) {
        self.value = value
        self.currency = currency
        self.precision = precision
        self.networkID = networkID
        self.placement = placement
        self.line = line
    }

    /// The value in millionths of the currency, clamped to 0…10¹² (a revenue metric counts whole micros).
    public var micros: Int64 {
        guard value.isFinite, value > 0 else { return 0 }
        return Int64(min(value * 1_000_000, 1e12).rounded())
    }
}

/// Why a network did not fill.
public struct NoFill: Hashable, Sendable, CustomStringConvertible {
    /// The network's reason, for traces (`"404"`, `"empty catalog"`, `"below floor"`).
    public var reason: String
    /// Creates a no-fill.
    public init(reason: String) { self.reason = reason }
    /// The reason.
    public var description: String { reason }
}

/// The outcome of a load that did not fail: a fill, or no fill. No fill is a normal answer, not an error.
public enum AdLoadResult: Sendable {
    /// The network returned an ad.
    case filled(LoadedAd)
    /// The network had nothing to show.
    case noFill(NoFill)

    /// The ad, when filled.
    public var ad: LoadedAd? {
        if case .filled(let ad) = self { return ad }
        return nil
    }
}

/// What a network can do.
public struct AdNetworkCapabilities: Hashable, Sendable {
    /// The formats it serves.
    public var formats: Set<AdFormat.Kind>
    /// Its fills may carry a price, the network's own (``LoadedAd/ecpm``, revenue precision `estimated`). False:
    /// they never do — a mediator then prices such a fill with its waterfall line's `ecpm` (`publisher_defined`)
    /// or not at all (`undefined`), and a fill that carries a price anyway breaks rule 1 of ``AdNetwork`` (the
    /// conformance kit checks it, bare and through mediators). A ``Mediator`` reports prices when one of its networks
    /// does or one of its waterfall lines (an arm's included) sets an `ecpm`: then, and only then, can its fills carry
    /// one.
    public var reportsPrice: Bool
    /// Its vendor id in the IAB's Global Vendor List, for the TCF checks of `PrivacyRules` (nil: none declared, so
    /// only the purposes are checked). ``PrivacyConfiguration/tcfVendorIDs`` can declare it for a network too.
    public var tcfVendorID: Int? = nil

    /// Creates capabilities.
    public init(formats: Set<AdFormat.Kind>, reportsPrice: Bool = false, tcfVendorID: Int? = nil) {
        self.formats = formats
        self.reportsPrice = reportsPrice
        self.tcfVendorID = tcfVendorID
    }

    /// Whether `format` is served.
    public func supports(_ format: AdFormat) -> Bool { formats.contains(format.kind) }
}

/// A source of ads. Every adapter — and the ``Mediator`` itself — conforms.
///
/// Rules every conforming type must honour (the conformance kit, `AdNetworkConformance`, checks each one):
/// 1. **Fill is well formed.** A fill's ``LoadedAd`` has this network's ``id``, the requested placement and
///    format, a non-empty creative id, a non-negative finite eCPM when priced (and no eCPM when its capabilities say
///    it reports no price: ``AdNetworkCapabilities/reportsPrice``), and an expiry after its load time.
/// 2. **No fill is a value.** Nothing to show returns ``AdLoadResult/noFill(_:)``; it never throws.
/// 3. **Errors map to the taxonomy.** `load` throws only ``AdError``, with the code the contract dictates
///    (401 → unauthorized, 429 → rateLimited with Retry-After, 5xx → server, unreadable body → invalidResponse,
///    transport failure → network, deadline → timeout).
/// 4. **Completion exactly once.** Each call returns or throws once; no work continues to report afterwards.
/// 5. **Cancellation is honoured promptly.** When the calling task is cancelled, `load` stops its I/O and throws
///    ``AdError/Code/cancelled`` (or returns) within 100 ms, and never fills afterwards.
/// 6. **Timeouts are honoured.** ``AdRequest/timeout`` bounds the whole load; past it, `load` throws
///    ``AdError/Code/timeout``.
/// 7. **No events outside an ad's life.** Events are sent only through ``LoadedAd/report(_:)``: never before the
///    load returned, never after ``LoadedAd/invalidate()``.
/// 8. **Impression once per show.** A second report of the same event for one ad sends nothing.
/// 9. **Privacy signals reach the network.** Every signal in ``AdRequest/privacy`` that the network's contract
///    can carry is sent on the wire.
/// 10. **Concurrent loads are safe.** `load` may be called from many tasks at once; each gets its own answer.
/// 11. **No I/O of its own.** HTTP goes through an injected `HTTPClient`, and base URLs are configuration.
public protocol AdNetwork: Sendable {
    /// A stable id (`growthcat`, `mars`, or the name the app configured).
    var id: String { get }
    /// What it can do.
    var capabilities: AdNetworkCapabilities { get }
    /// Loads an ad for `request`. See the protocol's rules.
    func load(_ request: AdRequest) async throws -> AdLoadResult
}

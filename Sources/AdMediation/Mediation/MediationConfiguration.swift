/// The mediator's configuration: placements with their waterfalls, plus breaker settings. Plain values: every field
/// but `placements` and each placement's `format` and `lines` has a default. Its JSON file form (snake_case keys,
/// errors naming the field path, unknown keys refused) is the `MediationFileFormat` module's.
public struct MediationConfiguration: Sendable, Hashable {
    /// Mediated placements by id.
    public var placements: [String: PlacementConfiguration]
    /// The circuit breaker applied to each network.
    public var circuitBreaker: CircuitBreakerConfiguration

    /// Creates a configuration.
    public init(placements: [String: PlacementConfiguration], circuitBreaker: CircuitBreakerConfiguration = .init()) {
        self.placements = placements
        self.circuitBreaker = circuitBreaker
    }

    /// Checks the configuration against the networks that exist (id → served formats). Throws
    /// ``AdError/Code/configuration`` naming the first field at fault.
    public func validate(networks: [String: Set<AdFormat.Kind>]) throws(AdError) {
        try circuitBreaker.validate(path: "circuit_breaker")
        if placements.isEmpty { throw AdError(.configuration, "placements: no placement configured") }
        for (id, placement) in placements.sorted(by: { $0.key < $1.key }) {
            try placement.validate(path: "placements.\(id)", networks: networks)
        }
    }
}

/// One mediated placement.
public struct PlacementConfiguration: Sendable, Hashable {
    /// How lines are tried.
    public enum Mode: String, Sendable, Hashable {
        /// Lines start concurrently (bounded by `max_in_flight`); priority still decides the winner.
        case parallel
        /// One line at a time, in order: the classic waterfall.
        case sequential
    }

    /// The format it serves (a banner with its size). Declared once: ``Mediator/load(_:userID:privacy:)`` needs no
    /// format. In JSON, `format` names it and `size` gives a banner's size (`320x50`, `standard`, …).
    public var format: AdFormat
    /// Parallel (default) or sequential.
    public var mode: Mode
    /// Ordered lines, highest priority first.
    public var lines: [WaterfallLine]
    /// Lines running at once in parallel mode. Default 4.
    public var maxInFlight: Int
    /// Deadline of the whole request, unless the request sets a shorter one. Default 5 s (JSON `deadline_ms`).
    public var deadline: Duration
    /// At most this many impressions per ``frequencyWindow``. Default: no cap.
    public var frequencyCap: Int?
    /// The window of the frequency cap. Default 1 hour (JSON `frequency_window_s`).
    public var frequencyWindow: Duration
    /// Minimum time between two impressions of this placement (pacing). Default: none (JSON `min_interval_s`).
    public var minInterval: Duration?
    /// The A/B label of this waterfall (1…64 printable ASCII characters), carried on every trace, log line, span and
    /// impression revenue record of the placement. Default: none.
    public var abLabel: String?
    /// Real-time bidders asked in parallel before the waterfall; the best valid bid competes with the lines by price
    /// (`specs/openrtb-bidder.md`, "Unified auction"). Default: none (a pure waterfall).
    public var bidders: [BidderLine]
    /// How the winning bid clears. Default first price.
    public var auction: AuctionType
    /// Lets the mediator order the lines itself from what it observes. Default: none (the configured order).
    public var optimizer: OptimizerConfiguration?
    /// A/B arms: each request of the placement runs one arm, chosen by weight (sticky per user when the request has a
    /// user id). An arm replaces the lines, bidders, auction type or optimizer it sets, and its label becomes the
    /// request's A/B label. Default: none.
    public var arms: [PlacementArm]
    /// What a losing bidder's loss notice (`lurl`) is told: the loss reason and the winning price (the default,
    /// standard OpenRTB), or the loss reason only, so no partner learns another's price (JSON `loss_notices`:
    /// `reason_and_price` or `reason_only`). It holds for every bidder of the placement, nested mediators' included.
    public var lossNotices: LossNoticeContent = .reasonAndPrice

    /// Creates a placement.
    public init(
        format: AdFormat,
        mode: Mode = .parallel,
        lines: [WaterfallLine],
        maxInFlight: Int = 4,
        deadline: Duration = .seconds(5),
        frequencyCap: Int? = nil,
        frequencyWindow: Duration = .seconds(3600),
        minInterval: Duration? = nil,
        abLabel: String? = nil,
        bidders: [BidderLine] = [],
        auction: AuctionType = .firstPrice,
        optimizer: OptimizerConfiguration? = nil,
        arms: [PlacementArm] = []
    ) {
        self.arms = arms
        self.abLabel = abLabel
        self.bidders = bidders
        self.auction = auction
        self.optimizer = optimizer
        self.format = format
        self.mode = mode
        self.lines = lines
        self.maxInFlight = maxInFlight
        self.deadline = deadline
        self.frequencyCap = frequencyCap
        self.frequencyWindow = frequencyWindow
        self.minInterval = minInterval
    }

    func validate(path: String, networks: [String: Set<AdFormat.Kind>]) throws(AdError) {
        if case .banner(let size) = format, !(1...10_000).contains(size.width) || !(1...10_000).contains(size.height) {
            throw AdError(.configuration, "\(path).size: invalid banner size \"\(size)\"")
        }
        if lines.isEmpty && bidders.isEmpty {
            throw AdError(.configuration, "\(path).lines: the waterfall is empty (and there are no bidders)")
        }
        if !(1...64).contains(maxInFlight) {
            throw AdError(.configuration, "\(path).max_in_flight: must be 1…64, got \(maxInFlight)")
        }
        try Limits.checkMilliseconds(deadline, field: "\(path).deadline_ms")
        if let cap = frequencyCap, !(1...1_000_000).contains(cap) {
            throw AdError(.configuration, "\(path).frequency_cap: must be 1…1000000, got \(cap)")
        }
        try Limits.checkSeconds(frequencyWindow, field: "\(path).frequency_window_s", zeroAllowed: false)
        if let minInterval { try Limits.checkSeconds(minInterval, field: "\(path).min_interval_s", zeroAllowed: true) }
        if let label = abLabel,
            !(1...64).contains(label.utf8.count) || !label.utf8.allSatisfy({ (0x21...0x7E).contains($0) })
        {
            throw AdError(.configuration, "\(path).ab_label: must be 1…64 printable ASCII characters without spaces")
        }
        try Self.validate(lines, field: "lines", path: path, format: format, networks: networks)
        let bidderLines = bidders.map {
            WaterfallLine(network: $0.network, placement: $0.placement, floorEcpm: $0.floorEcpm, timeout: $0.timeout)
        }
        try Self.validate(bidderLines, field: "bidders", path: path, format: format, networks: networks)
        try optimizer?.validate(path: "\(path).optimizer", lineCount: lines.count)
        var labels: Set<String> = []
        for (index, arm) in arms.enumerated() {
            let armPath = "\(path).arms[\(index)]"
            if !labels.insert(arm.label).inserted {
                throw AdError(.configuration, "\(armPath).label: \"\(arm.label.prefix(64))\" is used twice")
            }
            if !(arm.weight.isFinite && arm.weight > 0 && arm.weight <= 1_000_000) {
                throw AdError(
                    .configuration, "\(armPath).weight: must be over 0 and at most 1000000, got \(arm.weight)")
            }
            var variant = arm.apply(to: self)
            variant.arms = []
            try variant.validate(path: armPath, networks: networks)
        }
    }

    /// Checks each entry of `lines` or `bidders` (the same fields): its own values, a known network serving `format`,
    /// and no network and placement twice.
    private static func validate(
        _ entries: [WaterfallLine], field: String, path: String, format: AdFormat,
        networks: [String: Set<AdFormat.Kind>]
    ) throws(AdError) {
        var seen: [String: Int] = [:]
        for (index, entry) in entries.enumerated() {
            let entryPath = "\(path).\(field)[\(index)]"
            try entry.validate(path: entryPath)
            guard let formats = networks[entry.network] else {
                throw AdError(.configuration, "\(entryPath).network: unknown network \"\(entry.network)\"")
            }
            if !formats.contains(format.kind) {
                throw AdError(
                    .configuration,
                    "\(entryPath).network: network \"\(entry.network)\" does not serve format \"\(format.name)\"")
            }
            let key = "\(entry.network)\u{0}\(entry.placement)"
            if let first = seen[key] {
                throw AdError(
                    .configuration,
                    "\(entryPath): duplicate of \(field)[\(first)] (network \"\(entry.network)\", placement "
                        + "\"\(entry.placement)\")")
            }
            seen[key] = index
        }
    }

    /// The placement as `arm` runs it: the arm's lines, bidders, auction and optimizer where it sets them, its label as
    /// the A/B label.
    func variant(_ arm: PlacementArm) -> PlacementConfiguration { arm.apply(to: self) }
}

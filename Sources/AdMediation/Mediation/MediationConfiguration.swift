import Foundation

/// The mediator's configuration: placements with their waterfalls, plus breaker settings. `Codable` with
/// snake_case keys; every field but `placements` and each placement's `format` and `lines` has a default. A key no
/// type here knows is an error at its path, naming the nearest valid key (`placements.p.lines[0].floor_ecmp: unknown
/// key; did you mean "floor_ecpm"?`), never a silently defaulted field.
public struct MediationConfiguration: Codable, Sendable, Hashable {
    /// Mediated placements by id.
    public var placements: [String: PlacementConfiguration]
    /// The circuit breaker applied to each network.
    public var circuitBreaker: CircuitBreakerConfiguration

    /// Creates a configuration.
    public init(placements: [String: PlacementConfiguration], circuitBreaker: CircuitBreakerConfiguration = .init()) {
        self.placements = placements
        self.circuitBreaker = circuitBreaker
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case placements
        case circuitBreaker = "circuit_breaker"
    }

    /// Decodes with defaults for missing optional fields.
    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        placements = try container.decode([String: PlacementConfiguration].self, forKey: .placements)
        circuitBreaker =
            try container.decodeIfPresent(CircuitBreakerConfiguration.self, forKey: .circuitBreaker) ?? .init()
    }

    /// Decodes JSON, turning decoding failures into a ``AdError/Code/configuration`` error that names the field
    /// path (`placements.home.lines[1].timeout_ms: expected a number`).
    public static func decode(json: Data) throws(AdError) -> MediationConfiguration {
        if let violation = JSONLimits().violation(in: json) {
            throw AdError(.configuration, "configuration: \(violation)")
        }
        do {
            return try JSONDecoder().decode(MediationConfiguration.self, from: json)
        } catch let error as DecodingError {
            throw AdError(.configuration, ConfigurationPath.describe(error))
        } catch {
            throw AdError(.configuration, "invalid configuration: \(error)")
        }
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
public struct PlacementConfiguration: Codable, Sendable, Hashable {
    /// How lines are tried.
    public enum Mode: String, Codable, Sendable, Hashable {
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

    enum CodingKeys: String, CodingKey, CaseIterable {
        case format, size, mode, lines
        case maxInFlight = "max_in_flight"
        case deadlineMs = "deadline_ms"
        case frequencyCap = "frequency_cap"
        case frequencyWindowS = "frequency_window_s"
        case minIntervalS = "min_interval_s"
        case abLabel = "ab_label"
        case bidders, auction, optimizer, arms
    }

    /// Decodes with defaults.
    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        format = try Self.decodeFormat(c)
        mode = try c.decodeIfPresent(Mode.self, forKey: .mode) ?? .parallel
        bidders = try c.decodeIfPresent([BidderLine].self, forKey: .bidders) ?? []
        lines =
            try bidders.isEmpty
            ? c.decode([WaterfallLine].self, forKey: .lines)
            : c.decodeIfPresent([WaterfallLine].self, forKey: .lines) ?? []
        auction = try c.decodeIfPresent(AuctionType.self, forKey: .auction) ?? .firstPrice
        optimizer = try c.decodeIfPresent(OptimizerConfiguration.self, forKey: .optimizer)
        arms = try c.decodeIfPresent([PlacementArm].self, forKey: .arms) ?? []
        maxInFlight = try c.decodeWholeIfPresent(forKey: .maxInFlight) ?? 4
        deadline = try c.decodeMillisecondsIfPresent(forKey: .deadlineMs) ?? .seconds(5)
        frequencyCap = try c.decodeWholeIfPresent(forKey: .frequencyCap)
        frequencyWindow = try c.decodeSecondsIfPresent(forKey: .frequencyWindowS, zeroAllowed: false) ?? .seconds(3600)
        minInterval = try c.decodeSecondsIfPresent(forKey: .minIntervalS, zeroAllowed: true)
        abLabel = try c.decodeIfPresent(String.self, forKey: .abLabel)
    }

    /// `format` and, for a banner, `size`, with the field at fault named.
    private static func decodeFormat(_ c: KeyedDecodingContainer<CodingKeys>) throws -> AdFormat {
        let name = try c.decode(String.self, forKey: .format)
        guard let kind = AdFormat.Kind(rawValue: name) ?? (name == "appOpen" ? .appOpen : nil) else {
            throw DecodingError.dataCorruptedError(
                forKey: .format, in: c,
                debugDescription: "unknown format \"\(name.prefix(64))\" (expected one of "
                    + "\(AdFormat.allNames.joined(separator: ", ")))")
        }
        guard kind == .banner else { return AdFormat(name: kind.rawValue) ?? .interstitial }
        guard let size = try c.decodeIfPresent(String.self, forKey: .size) else {
            throw DecodingError.dataCorruptedError(
                forKey: .size, in: c, debugDescription: "a banner placement needs a size such as \"320x50\"")
        }
        guard let parsed = BannerSize(parsing: size) else {
            throw DecodingError.dataCorruptedError(
                forKey: .size, in: c, debugDescription: "invalid banner size \"\(size.prefix(64))\"")
        }
        return .banner(parsed)
    }

    /// Encodes the JSON form (`format` and `size`, times in `_ms` and `_s` fields).
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(format.name, forKey: .format)
        if case .banner(let size) = format { try c.encode(size.description, forKey: .size) }
        try c.encode(mode, forKey: .mode)
        try c.encode(lines, forKey: .lines)
        try c.encode(maxInFlight, forKey: .maxInFlight)
        try c.encode(deadline.wholeMilliseconds, forKey: .deadlineMs)
        try c.encodeIfPresent(frequencyCap, forKey: .frequencyCap)
        try c.encode(frequencyWindow.seconds, forKey: .frequencyWindowS)
        try c.encodeIfPresent(minInterval?.seconds, forKey: .minIntervalS)
        try c.encodeIfPresent(abLabel, forKey: .abLabel)
        if !bidders.isEmpty { try c.encode(bidders, forKey: .bidders) }
        try c.encode(auction, forKey: .auction)
        try c.encodeIfPresent(optimizer, forKey: .optimizer)
        if !arms.isEmpty { try c.encode(arms, forKey: .arms) }
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

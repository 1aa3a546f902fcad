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

/// One arm of a placement's A/B test (``PlacementConfiguration/arms``).
public struct PlacementArm: Codable, Sendable, Hashable {
    /// The arm's A/B label (1…64 printable ASCII characters), on every trace, log line, span and metric of its
    /// requests.
    public var label: String
    /// Its share of traffic, relative to the other arms' weights. Default 1.
    public var weight: Double
    /// Its waterfall, when it differs from the placement's.
    public var lines: [WaterfallLine]?
    /// Its bidders, when they differ from the placement's.
    public var bidders: [BidderLine]?
    /// Its auction type, when it differs.
    public var auction: AuctionType?
    /// Its optimizer, when it differs (`{"exploration": 0}`-style settings; absent: the placement's).
    public var optimizer: OptimizerConfiguration?

    /// Creates an arm.
    public init(
        label: String, weight: Double = 1, lines: [WaterfallLine]? = nil, bidders: [BidderLine]? = nil,
        auction: AuctionType? = nil,
        optimizer: OptimizerConfiguration? = nil
    ) {
        self.label = label
        self.weight = weight
        self.lines = lines
        self.bidders = bidders
        self.auction = auction
        self.optimizer = optimizer
    }

    enum CodingKeys: String, CodingKey, CaseIterable { case label, weight, lines, bidders, auction, optimizer }

    /// Decodes with defaults.
    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        label = try c.decode(String.self, forKey: .label)
        weight = try c.decodeIfPresent(Double.self, forKey: .weight) ?? 1
        lines = try c.decodeIfPresent([WaterfallLine].self, forKey: .lines)
        bidders = try c.decodeIfPresent([BidderLine].self, forKey: .bidders)
        auction = try c.decodeIfPresent(AuctionType.self, forKey: .auction)
        optimizer = try c.decodeIfPresent(OptimizerConfiguration.self, forKey: .optimizer)
    }

    func apply(to placement: PlacementConfiguration) -> PlacementConfiguration {
        var variant = placement
        if let lines { variant.lines = lines }
        if let bidders { variant.bidders = bidders }
        if let auction { variant.auction = auction }
        if let optimizer { variant.optimizer = optimizer }
        variant.abLabel = label
        return variant
    }
}

/// How the winning bid of a unified auction clears.
public enum AuctionType: String, Codable, Sendable, Hashable {
    /// The winner pays its own bid.
    case firstPrice = "first_price"
    /// The winner pays max(the second price + 0.01, its floor), never more than its bid.
    case secondPrice = "second_price"
}

/// A real-time bidder of a placement (an ``AdNetwork`` whose fills are priced bids, such as an OpenRTB bidder).
public struct BidderLine: Codable, Sendable, Hashable {
    /// The network's id.
    public var network: String
    /// The bidder's own placement id (its `tagid`).
    public var placement: String
    /// The lowest bid accepted (the request's `bidfloor`); a lower bid loses with reason 100. Default: none.
    public var floorEcpm: Double?
    /// How long the bidder may take (its `tmax` is this, or the time left, minus a margin). Default 500 ms (JSON
    /// `timeout_ms`).
    public var timeout: Duration

    /// Creates a bidder line.
    public init(network: String, placement: String, floorEcpm: Double? = nil, timeout: Duration = .milliseconds(500)) {
        self.network = network
        self.placement = placement
        self.floorEcpm = floorEcpm
        self.timeout = timeout
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case network, placement
        case floorEcpm = "floor_ecpm"
        case timeoutMs = "timeout_ms"
    }

    /// Decodes with defaults.
    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        network = try c.decode(String.self, forKey: .network)
        placement = try c.decode(String.self, forKey: .placement)
        floorEcpm = try c.decodeIfPresent(Double.self, forKey: .floorEcpm)
        timeout = try c.decodeMillisecondsIfPresent(forKey: .timeoutMs) ?? .milliseconds(500)
    }

    /// Encodes the JSON form (`timeout_ms`).
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(network, forKey: .network)
        try c.encode(placement, forKey: .placement)
        try c.encodeIfPresent(floorEcpm, forKey: .floorEcpm)
        try c.encode(timeout.wholeMilliseconds, forKey: .timeoutMs)
    }
}

/// The self-ordering waterfall of a placement: each line's eCPM, fill rate and timeouts are learned online, and
/// the lines are ordered by Thompson sampling within the publisher's constraints (the mediator's `WaterfallOptimizer`:
/// Thompson sampling, see the waterfall article).
public struct OptimizerConfiguration: Codable, Sendable, Hashable {
    /// The share of requests (0…1) whose order is drawn from the posterior (exploration); the rest use the
    /// posterior means (exploitation). Default 0.1.
    public var exploration: Double
    /// Indexes of lines that keep their configured position. Default: none.
    public var pinned: [Int]
    /// Observations lose half their weight after this many requests of the placement, so the order follows drift.
    /// Counted in requests, not seconds, so that what was learned survives the app being closed. Default 2000.
    public var halfLifeRequests: Double
    /// The random seed, for reproducible runs; default: a random one.
    public var seed: UInt64?

    /// Creates optimizer settings.
    public init(exploration: Double = 0.1, pinned: [Int] = [], halfLifeRequests: Double = 2000, seed: UInt64? = nil) {
        self.exploration = exploration
        self.pinned = pinned
        self.halfLifeRequests = halfLifeRequests
        self.seed = seed
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case exploration, pinned, seed
        case halfLifeRequests = "half_life_requests"
    }

    /// Decodes with defaults.
    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        exploration = try c.decodeIfPresent(Double.self, forKey: .exploration) ?? 0.1
        pinned = try c.decodeIfPresent([Int].self, forKey: .pinned) ?? []
        halfLifeRequests = try c.decodeIfPresent(Double.self, forKey: .halfLifeRequests) ?? 2000
        seed = try c.decodeIfPresent(UInt64.self, forKey: .seed)
    }

    func validate(path: String, lineCount: Int) throws(AdError) {
        if !(exploration >= 0 && exploration <= 1) {
            throw AdError(.configuration, "\(path).exploration: must be 0…1, got \(exploration)")
        }
        if !(halfLifeRequests >= 1 && halfLifeRequests <= 100_000_000) {
            throw AdError(.configuration, "\(path).half_life_requests: must be 1…100000000, got \(halfLifeRequests)")
        }
        for (position, index) in pinned.enumerated() where !(0..<lineCount).contains(index) {
            throw AdError(
                .configuration, "\(path).pinned[\(position)]: no line \(index) (the waterfall has \(lineCount))")
        }
        if Set(pinned).count != pinned.count { throw AdError(.configuration, "\(path).pinned: a line is pinned twice") }
    }
}

/// One line of a waterfall.
public struct WaterfallLine: Codable, Sendable, Hashable {
    /// The network's id.
    public var network: String
    /// The network's own placement id.
    public var placement: String
    /// A fill priced under this eCPM counts as no fill. Unpriced fills pass.
    public var floorEcpm: Double?
    /// How long this line may take. Default 1 s (JSON `timeout_ms`).
    public var timeout: Duration
    /// The publisher's price for this line (US dollars per thousand impressions), used for a fill the network did not
    /// price; its revenue precision is then `publisher_defined`. Default: none.
    public var ecpm: Double?

    /// Creates a line.
    public init(
        network: String, placement: String, floorEcpm: Double? = nil, timeout: Duration = .seconds(1),
        ecpm: Double? = nil
    ) {
        self.ecpm = ecpm
        self.network = network
        self.placement = placement
        self.floorEcpm = floorEcpm
        self.timeout = timeout
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case network, placement
        case floorEcpm = "floor_ecpm"
        case timeoutMs = "timeout_ms"
        case ecpm
    }

    /// Decodes with defaults.
    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        network = try c.decode(String.self, forKey: .network)
        placement = try c.decode(String.self, forKey: .placement)
        floorEcpm = try c.decodeIfPresent(Double.self, forKey: .floorEcpm)
        timeout = try c.decodeMillisecondsIfPresent(forKey: .timeoutMs) ?? .seconds(1)
        ecpm = try c.decodeIfPresent(Double.self, forKey: .ecpm)
    }

    /// Encodes the JSON form (`timeout_ms`).
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(network, forKey: .network)
        try c.encode(placement, forKey: .placement)
        try c.encodeIfPresent(floorEcpm, forKey: .floorEcpm)
        try c.encode(timeout.wholeMilliseconds, forKey: .timeoutMs)
        try c.encodeIfPresent(ecpm, forKey: .ecpm)
    }

    func validate(path: String) throws(AdError) {
        if network.isEmpty { throw AdError(.configuration, "\(path).network: must not be empty") }
        if placement.isEmpty { throw AdError(.configuration, "\(path).placement: must not be empty") }
        try Limits.checkMilliseconds(timeout, field: "\(path).timeout_ms")
        if let floor = floorEcpm, !(floor >= 0 && floor <= Limits.maxEcpm) {
            throw AdError(.configuration, "\(path).floor_ecpm: must be 0…\(Int(Limits.maxEcpm)), got \(floor)")
        }
        if let ecpm, !(ecpm >= 0 && ecpm <= Limits.maxEcpm) {
            throw AdError(.configuration, "\(path).ecpm: must be 0…\(Int(Limits.maxEcpm)), got \(ecpm)")
        }
    }
}

/// Rests a network after repeated failures. No fill is not a failure.
public struct CircuitBreakerConfiguration: Codable, Sendable, Hashable {
    /// Consecutive failures (errors or timeouts) that open the breaker. Default 5.
    public var failureThreshold: Int
    /// How long an open breaker rests before one half-open probe. Default 30 s (JSON `cool_down_s`).
    public var coolDown: Duration

    /// Creates breaker settings.
    public init(failureThreshold: Int = 5, coolDown: Duration = .seconds(30)) {
        self.failureThreshold = failureThreshold
        self.coolDown = coolDown
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case failureThreshold = "failure_threshold"
        case coolDownS = "cool_down_s"
    }

    /// Decodes with defaults.
    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        failureThreshold = try c.decodeWholeIfPresent(forKey: .failureThreshold) ?? 5
        coolDown = try c.decodeSecondsIfPresent(forKey: .coolDownS, zeroAllowed: true) ?? .seconds(30)
    }

    /// Encodes the JSON form (`cool_down_s`).
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(failureThreshold, forKey: .failureThreshold)
        try c.encode(coolDown.seconds, forKey: .coolDownS)
    }

    func validate(path: String) throws(AdError) {
        if !(1...10_000).contains(failureThreshold) {
            throw AdError(.configuration, "\(path).failure_threshold: must be 1…10000, got \(failureThreshold)")
        }
        try Limits.checkSeconds(coolDown, field: "\(path).cool_down_s", zeroAllowed: true)
    }
}

/// Turns `DecodingError`s into `a.b[2].c: problem` messages.
extension KeyedDecodingContainer {
    /// A whole number read as a JSON number of any size: `1e308` is reported at its field ("must be a whole number
    /// …") rather than as unreadable JSON; range checks happen in validation.
    func decodeWholeIfPresent(forKey key: Key) throws -> Int? {
        guard let number = try decodeIfPresent(Double.self, forKey: key) else { return nil }
        guard let whole = OutsideValue.integer(number, in: Int.min...Int.max) else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: codingPath + [key], debugDescription: "must be a whole number, got \(number)"))
        }
        return whole
    }

    /// A `_ms` field: whole milliseconds within 1…600000, as a duration.
    func decodeMillisecondsIfPresent(forKey key: Key) throws -> Duration? {
        guard let milliseconds = try decodeWholeIfPresent(forKey: key) else { return nil }
        guard (1...Limits.maxMilliseconds).contains(milliseconds) else {
            throw DecodingError.dataCorruptedError(
                forKey: key, in: self, debugDescription: "must be 1…\(Limits.maxMilliseconds), got \(milliseconds)")
        }
        return .milliseconds(milliseconds)
    }

    /// A `_s` field: seconds within 0…7 days (over 0 unless `zeroAllowed`), as a duration.
    func decodeSecondsIfPresent(forKey key: Key, zeroAllowed: Bool) throws -> Duration? {
        guard let seconds = try decodeIfPresent(Double.self, forKey: key) else { return nil }
        guard (zeroAllowed ? seconds >= 0 : seconds > 0) && seconds <= Limits.maxSeconds,
            let duration = OutsideValue.duration(seconds: seconds)
        else {
            throw DecodingError.dataCorruptedError(
                forKey: key, in: self,
                debugDescription: Limits.secondsRange(zeroAllowed: zeroAllowed) + ", got \(seconds)")
        }
        return duration
    }
}

/// The ranges every number of the configuration must fall in (validation names the field and the range).
enum Limits {
    /// Deadlines and timeouts: at most 10 minutes.
    static let maxMilliseconds = 600_000
    /// Windows, intervals and cool-downs: at most 7 days.
    static let maxSeconds: Double = 7 * 24 * 3600
    /// Floors: at most 1 000 000 per mille.
    static let maxEcpm: Double = 1_000_000

    /// `must be 0…604800` or `must be over 0 and at most 604800`.
    static func secondsRange(zeroAllowed: Bool) -> String {
        zeroAllowed ? "must be 0…\(Int(maxSeconds))" : "must be over 0 and at most \(Int(maxSeconds))"
    }

    /// Throws unless `duration` is 1 ms…10 min, naming `field` (a `_ms` field) and the value in milliseconds.
    static func checkMilliseconds(_ duration: Duration, field: String) throws(AdError) {
        guard duration >= .milliseconds(1) && duration <= .milliseconds(maxMilliseconds) else {
            throw AdError(.configuration, "\(field): must be 1…\(maxMilliseconds), got \(duration.milliseconds)")
        }
    }

    /// Throws unless `duration` is within 0 (excluded unless `zeroAllowed`)…7 days, naming `field` (a `_s` field).
    static func checkSeconds(_ duration: Duration, field: String, zeroAllowed: Bool) throws(AdError) {
        let low = zeroAllowed ? duration >= .zero : duration > .zero
        guard low && duration <= .seconds(maxSeconds) else {
            throw AdError(
                .configuration, "\(field): \(secondsRange(zeroAllowed: zeroAllowed)), got \(duration.seconds)")
        }
    }
}

extension Duration {
    /// Whole milliseconds, rounded down (for `_ms` fields).
    var wholeMilliseconds: Int64 { nanosecondsClamped / 1_000_000 }
}

/// How configuration errors name their field: a `DecodingError` as `a.b[2].c: problem`.
package enum ConfigurationPath {
    /// The error as `path: problem` (`placements.home.lines[1].timeout_ms: expected a number`).
    package static func describe(_ error: DecodingError) -> String {
        switch error {
        case .typeMismatch(let type, let context):
            return "\(path(context.codingPath)): expected \(typeName(type)) (\(context.debugDescription))"
        case .valueNotFound(let type, let context):
            return "\(path(context.codingPath)): missing \(typeName(type))"
        case .keyNotFound(let key, let context):
            return "\(path(context.codingPath + [key])): required field is missing"
        case .dataCorrupted(let context):
            let at = context.codingPath.isEmpty ? "configuration" : path(context.codingPath)
            return "\(at): \(context.debugDescription)"
        @unknown default:
            return "configuration: \(error)"
        }
    }

    static func path(_ keys: [any CodingKey]) -> String {
        var text = ""
        for key in keys {
            if let index = key.intValue {
                text += "[\(index)]"
            } else {
                text += text.isEmpty ? key.stringValue : ".\(key.stringValue)"
            }
        }
        return text.isEmpty ? "configuration" : text
    }

    private static func typeName(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Int.Type, is Double.Type: "a number"
        case is Bool.Type: "a boolean"
        default: "\(type)"
        }
    }
}

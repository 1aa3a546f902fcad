/// One arm of a placement's A/B test (``PlacementConfiguration/arms``).
public struct PlacementArm: Sendable, Hashable {
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
public enum AuctionType: String, Sendable, Hashable {
    /// The winner pays its own bid.
    case firstPrice = "first_price"
    /// The winner pays max(the second price + 0.01, its floor), never more than its bid.
    case secondPrice = "second_price"
}

/// A real-time bidder of a placement (an ``AdNetwork`` whose fills are priced bids, such as an OpenRTB bidder).
public struct BidderLine: Sendable, Hashable {
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

    /// The bidder as a line, for the checks lines and bidders share.
    var line: WaterfallLine {
        WaterfallLine(network: network, placement: placement, floorEcpm: floorEcpm, timeout: timeout)
    }
}

/// The self-ordering waterfall of a placement: each line's eCPM, fill rate and timeouts are learned online, and
/// the lines are ordered by Thompson sampling within the publisher's constraints (the mediator's `WaterfallOptimizer`:
/// Thompson sampling, see the waterfall article).
public struct OptimizerConfiguration: Sendable, Hashable {
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

    /// Every problem of the optimizer at `path` over a waterfall of `lineCount` lines.
    func problems(path: String, lineCount: Int) -> [String] {
        var problems: [String] = []
        if !(exploration >= 0 && exploration <= 1) {
            problems.append("\(path).exploration: must be 0…1, got \(exploration)")
        }
        if !(halfLifeRequests >= 1 && halfLifeRequests <= 100_000_000) {
            problems.append("\(path).half_life_requests: must be 1…100000000, got \(halfLifeRequests)")
        }
        return problems + pinnedProblems(path: path, lineCount: lineCount)
    }

    /// The problems of ``pinned`` over a waterfall of `lineCount` lines: a line it does not have, a line twice.
    func pinnedProblems(path: String, lineCount: Int) -> [String] {
        var problems: [String] = []
        for (position, index) in pinned.enumerated() where !(0..<lineCount).contains(index) {
            problems.append("\(path).pinned[\(position)]: no line \(index) (the waterfall has \(lineCount))")
        }
        if Set(pinned).count != pinned.count { problems.append("\(path).pinned: a line is pinned twice") }
        return problems
    }
}

/// One line of a waterfall.
public struct WaterfallLine: Sendable, Hashable {
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

    /// Every problem of the line's own values at `path` (its network is checked with the placement).
    func problems(path: String) -> [String] {
        var problems: [String] = []
        if network.isEmpty { problems.append("\(path).network: must not be empty") }
        if placement.isEmpty { problems.append("\(path).placement: must not be empty") }
        if let problem = Limits.millisecondsProblem(timeout, field: "\(path).timeout_ms") { problems.append(problem) }
        if let floor = floorEcpm, !(floor >= 0 && floor <= Limits.maxEcpm) {
            problems.append("\(path).floor_ecpm: must be 0…\(Int(Limits.maxEcpm)), got \(floor)")
        }
        if let ecpm, !(ecpm >= 0 && ecpm <= Limits.maxEcpm) {
            problems.append("\(path).ecpm: must be 0…\(Int(Limits.maxEcpm)), got \(ecpm)")
        }
        return problems
    }
}

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

    /// Every problem of the configuration against the networks that exist (id → served formats), each naming its
    /// file field and the value at fault (`placements.home.lines[1].network: unknown network "gx"`), in order: the
    /// breaker's, then each placement's by id — its own fields, each line, each bidder, its optimizer, each arm.
    /// Empty when the configuration is valid.
    public func problems(networks: [String: Set<AdFormat.Kind>]) -> [String] {
        var problems = circuitBreaker.problems(path: "circuit_breaker")
        if placements.isEmpty { problems.append("placements: no placement configured") }
        for (id, placement) in placements.sorted(by: { $0.key < $1.key }) {
            problems += placement.problems(path: "placements.\(id)", networks: networks)
        }
        return problems
    }

    /// Checks the configuration against the networks that exist (id → served formats). Throws
    /// ``AdError/Code/configuration`` listing every problem ``problems(networks:)`` finds, one per line (the first
    /// 20, then how many more).
    public func validate(networks: [String: Set<AdFormat.Kind>]) throws(AdError) {
        let problems = problems(networks: networks)
        guard !problems.isEmpty else { return }
        throw AdError(.configuration, Limits.listed(problems).joined(separator: "\n"))
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

    /// Every problem of the placement at `path` (its fields, lines, bidders, optimizer and arms).
    func problems(path: String, networks: [String: Set<AdFormat.Kind>]) -> [String] {
        var problems: [String] = []
        if case .banner(let size) = format, !(1...10_000).contains(size.width) || !(1...10_000).contains(size.height) {
            problems.append("\(path).size: invalid banner size \"\(size)\"")
        }
        if format == .unsized(.banner) {
            problems.append("\(path).size: a banner placement needs a size such as \"320x50\"")
        }
        if lines.isEmpty && bidders.isEmpty {
            problems.append("\(path).lines: the waterfall is empty (and there are no bidders)")
        }
        if !(1...64).contains(maxInFlight) {
            problems.append("\(path).max_in_flight: must be 1…64, got \(maxInFlight)")
        }
        problems += [Limits.millisecondsProblem(deadline, field: "\(path).deadline_ms")].compactMap { $0 }
        if let cap = frequencyCap, !(1...1_000_000).contains(cap) {
            problems.append("\(path).frequency_cap: must be 1…1000000, got \(cap)")
        }
        problems += [
            Limits.secondsProblem(frequencyWindow, field: "\(path).frequency_window_s", zeroAllowed: false),
            minInterval.flatMap { Limits.secondsProblem($0, field: "\(path).min_interval_s", zeroAllowed: true) },
        ].compactMap { $0 }
        if let label = abLabel, !Self.isLabel(label) {
            problems.append("\(path).ab_label: must be 1…64 printable ASCII characters without spaces")
        }
        problems += Self.problems(lines, field: "lines", path: path, format: format, networks: networks)
        problems += Self.problems(bidders.map(\.line), field: "bidders", path: path, format: format, networks: networks)
        problems += optimizer?.problems(path: "\(path).optimizer", lineCount: lines.count) ?? []
        var labels: Set<String> = []
        for (index, arm) in arms.enumerated() {
            let firstUse = labels.insert(arm.label).inserted
            problems += armProblems(arm, path: "\(path).arms[\(index)]", firstUse: firstUse, networks: networks)
        }
        return problems
    }

    /// The problems of `arm`: its label and weight, and what it replaces (its lines, bidders, optimizer), each at
    /// the arm's path. What it keeps of the placement was checked with the placement, so no problem is listed twice.
    private func armProblems(
        _ arm: PlacementArm, path: String, firstUse: Bool, networks: [String: Set<AdFormat.Kind>]
    ) -> [String] {
        var problems: [String] = []
        if !firstUse { problems.append("\(path).label: \"\(arm.label.prefix(64))\" is used twice") }
        if !Self.isLabel(arm.label) {
            problems.append("\(path).label: must be 1…64 printable ASCII characters without spaces")
        }
        if !(arm.weight.isFinite && arm.weight > 0 && arm.weight <= 1_000_000) {
            problems.append("\(path).weight: must be over 0 and at most 1000000, got \(arm.weight)")
        }
        let variant = arm.apply(to: self)
        if arm.lines != nil || arm.bidders != nil, variant.lines.isEmpty && variant.bidders.isEmpty {
            problems.append("\(path).lines: the waterfall is empty (and there are no bidders)")
        }
        if let lines = arm.lines {
            problems += Self.problems(lines, field: "lines", path: path, format: format, networks: networks)
        }
        if let bidders = arm.bidders {
            problems += Self.problems(
                bidders.map(\.line), field: "bidders", path: path, format: format, networks: networks)
        }
        if let optimizer = arm.optimizer {
            problems += optimizer.problems(path: "\(path).optimizer", lineCount: variant.lines.count)
        } else if arm.lines != nil, let optimizer {
            // The placement's optimizer over the arm's lines: only its pinned lines can be wrong here.
            problems += optimizer.pinnedProblems(path: "\(path).optimizer", lineCount: variant.lines.count)
        }
        return problems
    }

    /// 1…64 printable ASCII characters without spaces (an A/B label).
    private static func isLabel(_ label: String) -> Bool {
        (1...64).contains(label.utf8.count) && label.utf8.allSatisfy { (0x21...0x7E).contains($0) }
    }

    /// The problems of each entry of `lines` or `bidders` (the same fields): its own values, a known network serving
    /// `format`, and no network and placement twice.
    private static func problems(
        _ entries: [WaterfallLine], field: String, path: String, format: AdFormat,
        networks: [String: Set<AdFormat.Kind>]
    ) -> [String] {
        var problems: [String] = []
        var seen: [String: Int] = [:]
        for (index, entry) in entries.enumerated() {
            let entryPath = "\(path).\(field)[\(index)]"
            problems += entry.problems(path: entryPath)
            if let formats = networks[entry.network] {
                if !formats.contains(format.kind) {
                    problems.append(
                        "\(entryPath).network: network \"\(entry.network)\" does not serve format "
                            + "\"\(format.name)\"")
                }
            } else if !entry.network.isEmpty {
                problems.append("\(entryPath).network: unknown network \"\(entry.network)\"")
            }
            let key = "\(entry.network)\u{0}\(entry.placement)"
            if let first = seen[key] {
                problems.append(
                    "\(entryPath): duplicate of \(field)[\(first)] (network \"\(entry.network)\", placement "
                        + "\"\(entry.placement)\")")
            } else {
                seen[key] = index
            }
        }
        return problems
    }

    /// The placement as `arm` runs it: the arm's lines, bidders, auction and optimizer where it sets them, its label as
    /// the A/B label.
    func variant(_ arm: PlacementArm) -> PlacementConfiguration { arm.apply(to: self) }
}

extension MediationConfiguration {
    /// Whether a waterfall line of some placement or arm sets an `ecpm`: a fill it wins carries that price
    /// (`publisher_defined`) even from a network that reports none, so the mediator's fills may carry a price.
    var pricesALine: Bool {
        placements.values.contains { placement in
            ([placement] + placement.arms.map(placement.variant)).contains { $0.lines.contains { $0.ecpm != nil } }
        }
    }
}

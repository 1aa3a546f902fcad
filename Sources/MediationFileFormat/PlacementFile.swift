import AdMediation

extension PlacementConfiguration: Codable {
    enum CodingKeys: String, CodingKey, CaseIterable {
        case format, size, mode, lines
        case maxInFlight = "max_in_flight"
        case deadlineMs = "deadline_ms"
        case frequencyCap = "frequency_cap"
        case frequencyWindowS = "frequency_window_s"
        case minIntervalS = "min_interval_s"
        case abLabel = "ab_label"
        case bidders, auction, optimizer, arms
        case lossNotices = "loss_notices"
    }

    /// Decodes the file form (`format` and a banner's `size`, times in `_ms` and `_s` fields), with defaults. When
    /// the decoder collects problems (``ProblemCollector``), each field's is recorded and decoding goes on.
    public init(from decoder: any Decoder) throws {
        try decoder.rejectingUnknownKeys(CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let known = Self.knownKinds(in: decoder)
        let format = try decoder.recovering(.interstitial) { try Self.decodeFormat(c, known: known) }
        let mode = try decoder.recovering(.parallel) { try c.decodeIfPresent(Mode.self, forKey: .mode) ?? .parallel }
        // Nil when `bidders` is there but unreadable: `lines` is then not required (no second, false problem).
        let bidders: [BidderLine]? = try decoder.recovering(nil) {
            try c.decodeIfPresent([BidderLine].self, forKey: .bidders) ?? []
        }
        let lines = try decoder.recovering([]) {
            try bidders == []
                ? c.decode([WaterfallLine].self, forKey: .lines)
                : c.decodeIfPresent([WaterfallLine].self, forKey: .lines) ?? []
        }
        let auction = try decoder.recovering(.firstPrice) {
            try c.decodeIfPresent(AuctionType.self, forKey: .auction) ?? .firstPrice
        }
        let optimizer = try decoder.recovering(nil) {
            try c.decodeIfPresent(OptimizerConfiguration.self, forKey: .optimizer)
        }
        let arms = try decoder.recovering([]) { try c.decodeIfPresent([PlacementArm].self, forKey: .arms) ?? [] }
        let maxInFlight = try decoder.recovering(4) { try c.decodeWholeIfPresent(forKey: .maxInFlight) ?? 4 }
        let deadline = try decoder.recovering(.seconds(5)) {
            try c.decodeMillisecondsIfPresent(forKey: .deadlineMs) ?? .seconds(5)
        }
        let frequencyCap = try decoder.recovering(nil) { try c.decodeWholeIfPresent(forKey: .frequencyCap) }
        let frequencyWindow = try decoder.recovering(.seconds(3600)) {
            try c.decodeSecondsIfPresent(forKey: .frequencyWindowS, zeroAllowed: false) ?? .seconds(3600)
        }
        let minInterval = try decoder.recovering(nil) {
            try c.decodeSecondsIfPresent(forKey: .minIntervalS, zeroAllowed: true)
        }
        let abLabel = try decoder.recovering(nil) { try c.decodeIfPresent(String.self, forKey: .abLabel) }
        let lossNotices = try decoder.recovering(.reasonAndPrice) {
            try c.decodeIfPresent(LossNoticeContent.self, forKey: .lossNotices) ?? .reasonAndPrice
        }
        self.init(
            format: format, mode: mode, lines: lines, maxInFlight: maxInFlight, deadline: deadline,
            frequencyCap: frequencyCap, frequencyWindow: frequencyWindow, minInterval: minInterval, abLabel: abLabel,
            bidders: bidders ?? [], auction: auction, optimizer: optimizer, arms: arms)
        self.lossNotices = lossNotices
    }

    /// `format` (one of the `known` kinds; `appOpen` is read as `app_open`) and, for a banner, `size`, with the field
    /// at fault named.
    private static func decodeFormat(_ c: KeyedDecodingContainer<CodingKeys>, known: [AdFormat.Kind]) throws
        -> AdFormat
    {
        let name = try c.decode(String.self, forKey: .format)
        let kind = AdFormat.Kind(rawValue: name == "appOpen" ? AdFormat.Kind.appOpen.rawValue : name)
        guard known.contains(kind) else {
            throw DecodingError.dataCorruptedError(
                forKey: .format, in: c,
                debugDescription: "unknown format \"\(name.prefix(64))\" (expected one of "
                    + "\(known.map(\.rawValue).joined(separator: ", ")))")
        }
        guard kind == .banner else { return .unsized(kind) }
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

    /// Encodes the file form (`format` and `size`, times in `_ms` and `_s` fields).
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
        if lossNotices != .reasonAndPrice { try c.encode(lossNotices, forKey: .lossNotices) }
    }
}

/// `parallel` or `sequential`.
extension PlacementConfiguration.Mode: Codable {}

/// `first_price` or `second_price`.
extension AuctionType: Codable {}

/// `reason_and_price` or `reason_only`.
extension LossNoticeContent: Codable {}

extension PlacementArm: Codable {
    enum CodingKeys: String, CodingKey, CaseIterable { case label, weight, lines, bidders, auction, optimizer }

    /// Decodes the file form, with defaults (each field's problem recorded when the decoder collects them).
    public init(from decoder: any Decoder) throws {
        try decoder.rejectingUnknownKeys(CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            label: try decoder.recovering("") { try c.decode(String.self, forKey: .label) },
            weight: try decoder.recovering(1) { try c.decodeIfPresent(Double.self, forKey: .weight) ?? 1 },
            lines: try decoder.recovering(nil) { try c.decodeIfPresent([WaterfallLine].self, forKey: .lines) },
            bidders: try decoder.recovering(nil) { try c.decodeIfPresent([BidderLine].self, forKey: .bidders) },
            auction: try decoder.recovering(nil) { try c.decodeIfPresent(AuctionType.self, forKey: .auction) },
            optimizer: try decoder.recovering(nil) {
                try c.decodeIfPresent(OptimizerConfiguration.self, forKey: .optimizer)
            })
    }

    /// Encodes the file form.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(label, forKey: .label)
        try c.encode(weight, forKey: .weight)
        try c.encodeIfPresent(lines, forKey: .lines)
        try c.encodeIfPresent(bidders, forKey: .bidders)
        try c.encodeIfPresent(auction, forKey: .auction)
        try c.encodeIfPresent(optimizer, forKey: .optimizer)
    }
}

extension BidderLine: Codable {
    enum CodingKeys: String, CodingKey, CaseIterable {
        case network, placement
        case floorEcpm = "floor_ecpm"
        case timeoutMs = "timeout_ms"
    }

    /// Decodes the file form (`floor_ecpm`, `timeout_ms`), with defaults (each field's problem recorded when the
    /// decoder collects them).
    public init(from decoder: any Decoder) throws {
        try decoder.rejectingUnknownKeys(CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            network: try decoder.recovering("") { try c.decode(String.self, forKey: .network) },
            placement: try decoder.recovering("") { try c.decode(String.self, forKey: .placement) },
            floorEcpm: try decoder.recovering(nil) { try c.decodeIfPresent(Double.self, forKey: .floorEcpm) },
            timeout: try decoder.recovering(.milliseconds(500)) {
                try c.decodeMillisecondsIfPresent(forKey: .timeoutMs) ?? .milliseconds(500)
            })
    }

    /// Encodes the file form (`timeout_ms`).
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(network, forKey: .network)
        try c.encode(placement, forKey: .placement)
        try c.encodeIfPresent(floorEcpm, forKey: .floorEcpm)
        try c.encode(timeout.wholeMilliseconds, forKey: .timeoutMs)
    }
}

extension OptimizerConfiguration: Codable {
    enum CodingKeys: String, CodingKey, CaseIterable {
        case exploration, pinned, seed
        case halfLifeRequests = "half_life_requests"
    }

    /// Decodes the file form (`half_life_requests`), with defaults (each field's problem recorded when the decoder
    /// collects them).
    public init(from decoder: any Decoder) throws {
        try decoder.rejectingUnknownKeys(CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            exploration: try decoder.recovering(0.1) {
                try c.decodeIfPresent(Double.self, forKey: .exploration) ?? 0.1
            },
            pinned: try decoder.recovering([]) { try c.decodeIfPresent([Int].self, forKey: .pinned) ?? [] },
            halfLifeRequests: try decoder.recovering(2000) {
                try c.decodeIfPresent(Double.self, forKey: .halfLifeRequests) ?? 2000
            },
            seed: try decoder.recovering(nil) { try c.decodeIfPresent(UInt64.self, forKey: .seed) })
    }

    /// Encodes the file form.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(exploration, forKey: .exploration)
        try c.encode(pinned, forKey: .pinned)
        try c.encode(halfLifeRequests, forKey: .halfLifeRequests)
        try c.encodeIfPresent(seed, forKey: .seed)
    }
}

extension WaterfallLine: Codable {
    enum CodingKeys: String, CodingKey, CaseIterable {
        case network, placement
        case floorEcpm = "floor_ecpm"
        case timeoutMs = "timeout_ms"
        case ecpm
    }

    /// Decodes the file form (`floor_ecpm`, `timeout_ms`), with defaults (each field's problem recorded when the
    /// decoder collects them).
    public init(from decoder: any Decoder) throws {
        try decoder.rejectingUnknownKeys(CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            network: try decoder.recovering("") { try c.decode(String.self, forKey: .network) },
            placement: try decoder.recovering("") { try c.decode(String.self, forKey: .placement) },
            floorEcpm: try decoder.recovering(nil) { try c.decodeIfPresent(Double.self, forKey: .floorEcpm) },
            timeout: try decoder.recovering(.seconds(1)) {
                try c.decodeMillisecondsIfPresent(forKey: .timeoutMs) ?? .seconds(1)
            },
            ecpm: try decoder.recovering(nil) { try c.decodeIfPresent(Double.self, forKey: .ecpm) })
    }

    /// Encodes the file form (`timeout_ms`).
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(network, forKey: .network)
        try c.encode(placement, forKey: .placement)
        try c.encodeIfPresent(floorEcpm, forKey: .floorEcpm)
        try c.encode(timeout.wholeMilliseconds, forKey: .timeoutMs)
        try c.encodeIfPresent(ecpm, forKey: .ecpm)
    }
}

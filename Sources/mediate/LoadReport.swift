import AdMediation
import Foundation

/// The ad a `load` filled with, as its outputs name it: `{"network", "ecpm", "ad_id", "revenue": {"value_usd",
/// "precision", "line", "ab_label"}}` (`ecpm`, `line` and `ab_label` null when unknown: the last two when no mediator
/// served the ad).
struct LoadWinner: Encodable, Sendable {
    /// The network that served it (the winning line's, for a mediated request).
    var network: String
    var ecpm: Double?
    var adID: String
    var revenue: ImpressionRevenue

    enum CodingKeys: String, CodingKey {
        case network, ecpm, revenue
        case adID = "ad_id"
    }

    /// The keys of `revenue`.
    enum RevenueKeys: String, CodingKey {
        case precision, line
        case value = "value_usd"
        case abLabel = "ab_label"
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(network, forKey: .network)
        try container.encode(ecpm, forKey: .ecpm)
        try container.encode(adID, forKey: .adID)
        var nested = container.nestedContainer(keyedBy: RevenueKeys.self, forKey: .revenue)
        try nested.encode(revenue.value, forKey: .value)
        try nested.encode(revenue.precision.rawValue, forKey: .precision)
        try nested.encode(revenue.line?.index, forKey: .line)
        try nested.encode(revenue.line?.abLabel, forKey: .abLabel)
    }
}

/// What a network asked alone (`load --network`) answered.
struct AloneAnswer: Sendable {
    /// How the request ended.
    enum Outcome: Sendable {
        case fill(ecpm: Double?)
        case noFill
        /// The privacy rules refused to ask it, with their reason.
        case blocked(String)
        case error(AdError)
    }

    var network: String
    var placement: String
    /// What the privacy rules restricted, when they let it be asked.
    var privacy: [String]
    var outcome: Outcome
    var latencyMs: Double
}

/// One `mediate load` as one typed value: the result, each line and bid of the trace, and (with `--bodies`) the HTTP
/// exchanges. `--format json` prints it; the text and the HTML page are rendered from it.
struct LoadReport: Encodable, Sendable {
    var placement: String
    var winner: LoadWinner?
    /// The waterfall's lines in order (or the one network asked alone).
    var trace: [Line]
    var bids: [Bid]
    /// With `--bodies`: each exchange, redacted; absent otherwise.
    var exchanges: [BodyRecorder.Shown]?

    /// Whether the request filled.
    var filled: Bool { winner != nil }

    /// `placement: filled by cb (ad a1)`, or `placement: no fill`.
    var result: String {
        "\(placement): " + (winner.map { "filled by \($0.network) (ad \($0.adID))" } ?? "no fill")
    }

    /// Whether something was asked and nothing answered: every line and bid failed or timed out.
    var nothingAnswered: Bool {
        let outcomes = trace.map(\.outcome) + bids.map(\.outcome)
        return !filled && !outcomes.isEmpty && outcomes.allSatisfy { $0 == "error" || $0 == "timeout" }
    }

    /// The report of a mediated request's trace (`mediated`) or of a network asked `alone`; `exchanges` (with
    /// `--bodies`) shown through `redaction`.
    init(
        placement: String, winner: LoadWinner?, mediated: MediationTrace?, alone: AloneAnswer?,
        exchanges: [BodyRecorder.Exchange]? = nil, redaction: Redaction = Redaction([])
    ) {
        self.placement = placement
        self.winner = winner
        trace = (alone.map { [Line($0)] } ?? []) + (mediated?.lines.map(Line.init) ?? [])
        bids = mediated?.bids.map(Bid.init) ?? []
        self.exchanges = exchanges.map { $0.map { BodyRecorder.Shown($0, redaction) } }
    }

    enum CodingKeys: String, CodingKey {
        case placement, filled, winner, trace, bids, exchanges
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(placement, forKey: .placement)
        try container.encode(filled, forKey: .filled)
        try container.encode(winner, forKey: .winner)
        try container.encode(trace, forKey: .trace)
        try container.encode(bids, forKey: .bids)
        try container.encodeIfPresent(exchanges, forKey: .exchanges)
    }

    /// An error as `{"code", "message"}`.
    struct Failure: Encodable, Sendable {
        var code: String
        var message: String

        init(_ error: AdError) {
            code = error.code.name
            message = error.message
        }

        enum CodingKeys: String, CodingKey {
            case code, message
        }
    }

    /// `skipped` lines' reason: the skip's name, with the privacy rules' reason when they blocked it.
    static func skipReason(_ reason: SkipReason, privacy: String?) -> String {
        privacy.map { "\(reason.rawValue): \($0)" } ?? reason.rawValue
    }

    /// One line: outcome, latency (ms, 3 decimals), eCPM, what the privacy rules restricted, the error, the reason.
    struct Line: Encodable, Sendable {
        var network: String
        var placement: String
        /// `fill`, `no_fill`, `error`, `timeout` or `skipped`.
        var outcome: String
        var latencyMs: Double?
        var ecpm: Double?
        var privacy: [String]
        var error: Failure?
        var reason: String?

        /// `network/placement`.
        var name: String { "\(network)/\(placement)" }

        init(_ line: LineTrace) {
            network = line.network
            placement = line.placement
            outcome = line.outcome.name
            latencyMs = line.latency.map { round3($0.milliseconds) }
            ecpm = line.ecpm
            privacy = line.privacyRestrictions
            switch line.outcome {
            case .error(let failure): error = Failure(failure)
            case .skipped(let skip): reason = LoadReport.skipReason(skip, privacy: line.privacyReason)
            case .noFill(let why): reason = why
            default: break
            }
        }

        init(_ alone: AloneAnswer) {
            network = alone.network
            placement = alone.placement
            latencyMs = alone.latencyMs
            privacy = alone.privacy
            switch alone.outcome {
            case .fill(let price):
                outcome = "fill"
                ecpm = price
            case .noFill: outcome = "no_fill"
            case .blocked(let message):
                // The gate refused to ask it: reported as the mediated path reports a blocked line.
                outcome = "skipped"
                reason = LoadReport.skipReason(.privacyBlocked, privacy: message)
            case .error(let failure):
                outcome = "error"
                error = Failure(failure)
            }
        }

        enum CodingKeys: String, CodingKey {
            case network, placement, outcome, ecpm, privacy, error, reason
            case latencyMs = "latency_ms"
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(network, forKey: .network)
            try container.encode(placement, forKey: .placement)
            try container.encode(outcome, forKey: .outcome)
            try container.encode(latencyMs, forKey: .latencyMs)
            try container.encode(ecpm, forKey: .ecpm)
            try container.encode(privacy, forKey: .privacy)
            try container.encode(error, forKey: .error)
            try container.encode(reason, forKey: .reason)
        }
    }

    /// One bid: outcome, latency, price, what the privacy rules restricted, the reason, and how its auction ended.
    struct Bid: Encodable, Sendable {
        var network: String
        var placement: String
        var outcome: String
        var latencyMs: Double?
        var price: Double?
        var privacy: [String]
        var reason: String?
        var auction: AuctionResult?

        /// `network/placement`.
        var name: String { "\(network)/\(placement)" }

        /// `won, clears at 1.26` or `lost (102 lost_to_higher_bid)`; nil for a bid that was not priced.
        var auctionText: String? {
            switch auction {
            case .won(let clearing)?: String(format: "won, clears at %.2f", clearing)
            case .lost(let reason, _)?: "lost (\(reason.code) \(reason.name))"
            case nil: nil
            }
        }

        init(_ bid: BidTrace) {
            network = bid.network
            placement = bid.placement
            outcome = bid.outcome.name
            latencyMs = bid.latency.map { round3($0.milliseconds) }
            price = bid.price
            privacy = bid.privacyRestrictions
            switch bid.outcome {
            case .error(let error): reason = "\(error.code.name): \(error.message)"
            case .skipped(let skip): reason = LoadReport.skipReason(skip, privacy: bid.privacyReason)
            case .noFill(let why): reason = why
            default: break
            }
            auction = bid.auction
        }

        enum CodingKeys: String, CodingKey {
            case network, placement, outcome, price, privacy, reason, auction
            case latencyMs = "latency_ms"
        }

        /// The keys of `auction`.
        enum AuctionKeys: String, CodingKey {
            case result
            case clearingPrice = "clearing_price"
            case lossCode = "loss_code"
            case lossReason = "loss_reason"
            case winningPrice = "winning_price"
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(network, forKey: .network)
            try container.encode(placement, forKey: .placement)
            try container.encode(outcome, forKey: .outcome)
            try container.encode(latencyMs, forKey: .latencyMs)
            try container.encode(price, forKey: .price)
            try container.encode(privacy, forKey: .privacy)
            try container.encode(reason, forKey: .reason)
            switch auction {
            case .won(let clearing)?:
                var nested = container.nestedContainer(keyedBy: AuctionKeys.self, forKey: .auction)
                try nested.encode("won", forKey: .result)
                try nested.encode(clearing, forKey: .clearingPrice)
            case .lost(let reason, let price)?:
                var nested = container.nestedContainer(keyedBy: AuctionKeys.self, forKey: .auction)
                try nested.encode("lost", forKey: .result)
                try nested.encode(reason.code, forKey: .lossCode)
                try nested.encode(reason.name, forKey: .lossReason)
                try nested.encode(price, forKey: .winningPrice)
            case nil:
                try container.encodeNil(forKey: .auction)
            }
        }
    }
}

extension Load {
    /// `load --format json`: the placement, whether it filled, the winner, the trace's lines and bids, and (with
    /// `--bodies`) the HTTP exchanges.
    static func json(
        placement: String, winner: LoadWinner?, mediated: MediationTrace?, alone: AloneAnswer?,
        exchanges: [BodyRecorder.Exchange]?, redaction: Redaction
    ) -> String {
        ReportJSON.text(
            LoadReport(
                placement: placement, winner: winner, mediated: mediated, alone: alone, exchanges: exchanges,
                redaction: redaction))
    }

    /// The text form: the result, then one row per line and bid, columns aligned (source, outcome, latency
    /// right-aligned, details), then the exchanges. Every line escaped (ad ids, reasons and messages come from
    /// servers).
    static func text(_ report: LoadReport, dropped: Int) -> [String] {
        var rows: [[String]] = []
        func latency(_ ms: Double?) -> String { ms.map { String(format: "%.1f ms", $0) } ?? "-" }
        for line in report.trace {
            var details: [String] = []
            if let ecpm = line.ecpm { details.append(String(format: "eCPM %.2f", ecpm)) }
            if let reason = line.reason { details.append("(\(reason))") }
            if let error = line.error { details.append("\(error.code): \(error.message)") }
            if !line.privacy.isEmpty { details.append("privacy: \(line.privacy.joined(separator: "; "))") }
            rows.append([line.name, line.outcome, latency(line.latencyMs)] + details)
        }
        for bid in report.bids {
            var details: [String] = []
            if let price = bid.price { details.append(String(format: "price %.2f", price)) }
            if let reason = bid.reason { details.append("(\(reason))") }
            if let auction = bid.auctionText { details.append(auction) }
            rows.append(["bid \(bid.name)", bid.outcome, latency(bid.latencyMs)] + details)
        }
        var lines = [TerminalText.escaped(report.result)] + alignedRows(rows)
        if let exchanges = report.exchanges {
            lines += BodyRecorder.text(exchanges, dropped: dropped).map(TerminalText.escaped)
        }
        return lines
    }
}

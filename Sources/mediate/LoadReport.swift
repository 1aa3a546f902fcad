import AdMediation
import Foundation

/// The ad a `load` filled with, as its outputs name it.
struct LoadWinner: Sendable {
    /// The network that served it (the winning line's, for a mediated request).
    var network: String
    var ecpm: Double?
    var adID: String
    var revenue: ImpressionRevenue
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

extension Load {
    /// The trace's lines and bids as the outputs show them: a mediated request's `trace`, or the one line of a network
    /// asked `alone`.
    static func entries(
        mediated: MediationTrace?, alone: AloneAnswer?
    ) -> (trace: [[String: Any]], bids: [[String: Any]]) {
        var trace: [[String: Any]] = []
        var bids: [[String: Any]] = []
        if let alone {
            var entry: [String: Any] = ["network": alone.network, "placement": alone.placement]
            entry["privacy"] = alone.privacy
            switch alone.outcome {
            case .fill(let ecpm):
                entry["outcome"] = "fill"
                entry["ecpm"] = ecpm ?? NSNull()
                entry["error"] = NSNull()
                entry["reason"] = NSNull()
            case .noFill:
                entry["outcome"] = "no_fill"
                entry["ecpm"] = NSNull()
                entry["error"] = NSNull()
                entry["reason"] = NSNull()
            case .blocked(let message):
                entry["outcome"] = "skipped"
                entry["ecpm"] = NSNull()
                entry["error"] = NSNull()
                entry["reason"] = "\(SkipReason.privacyBlocked.rawValue): \(message)"
            case .error(let error):
                entry["outcome"] = "error"
                entry["ecpm"] = NSNull()
                entry["error"] = ["code": error.code.name, "message": error.message]
                entry["reason"] = NSNull()
            }
            entry["latency_ms"] = alone.latencyMs
            trace.append(entry)
        }
        guard let mediated else { return (trace, bids) }
        for line in mediated.lines {
            var entry: [String: Any] = [
                "network": line.network, "placement": line.placement, "outcome": line.outcome.name,
                "latency_ms": line.latency.map { round3($0.milliseconds) } ?? NSNull(),
                "ecpm": line.ecpm ?? NSNull(), "privacy": line.privacyRestrictions,
            ]
            switch line.outcome {
            case .error(let error):
                entry["error"] = ["code": error.code.name, "message": error.message]
                entry["reason"] = NSNull()
            case .skipped(let reason):
                entry["error"] = NSNull()
                entry["reason"] = line.privacyReason.map { "\(reason.rawValue): \($0)" } ?? reason.rawValue
            case .noFill(let reason):
                entry["error"] = NSNull()
                entry["reason"] = reason
            default:
                entry["error"] = NSNull()
                entry["reason"] = NSNull()
            }
            trace.append(entry)
        }
        for bid in mediated.bids {
            var entry: [String: Any] = [
                "network": bid.network, "placement": bid.placement, "outcome": bid.outcome.name,
                "latency_ms": bid.latency.map { round3($0.milliseconds) } ?? NSNull(),
                "price": bid.price ?? NSNull(), "privacy": bid.privacyRestrictions,
            ]
            switch bid.outcome {
            case .error(let error): entry["reason"] = "\(error.code.name): \(error.message)"
            case .skipped(let reason):
                entry["reason"] = bid.privacyReason.map { "\(reason.rawValue): \($0)" } ?? reason.rawValue
            case .noFill(let reason): entry["reason"] = reason
            default: entry["reason"] = NSNull()
            }
            switch bid.auction {
            case .won(let clearing)?: entry["auction"] = ["result": "won", "clearing_price": clearing]
            case .lost(let reason, let price)?:
                entry["auction"] = [
                    "result": "lost", "loss_code": reason.code, "loss_reason": reason.name,
                    "winning_price": price.map { $0 as Any } ?? NSNull(),
                ]
            case nil: entry["auction"] = NSNull()
            }
            bids.append(entry)
        }
        return (trace, bids)
    }

    /// `load --format json`: the placement, whether it filled, the winner, the trace's lines and bids, and (with
    /// `--bodies`) the HTTP exchanges.
    static func json(
        placement: String, winner: LoadWinner?, mediated: MediationTrace?, alone: AloneAnswer?,
        exchanges: [BodyRecorder.Exchange]?, redaction: Redaction
    ) -> String {
        let (trace, bids) = entries(mediated: mediated, alone: alone)
        let winnerObject: Any =
            winner.map { winner -> [String: Any] in
                [
                    "network": winner.network, "ecpm": winner.ecpm ?? NSNull(), "ad_id": winner.adID,
                    "revenue": revenueJSON(winner.revenue),
                ]
            } ?? NSNull()
        var object: [String: Any] = [
            "placement": placement, "filled": winner != nil, "winner": winnerObject, "trace": trace, "bids": bids,
        ]
        if let exchanges { object["exchanges"] = BodyRecorder.json(exchanges, redaction) }
        let data =
            (try? JSONSerialization.data(
                withJSONObject: object, options: [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }
}

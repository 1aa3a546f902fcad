import AdMediation
import Foundation
import MediateKit

/// `mediate list` as one typed value: the placements (format, mode, deadline, lines and bidders in order) and the
/// networks (type, base URL without secrets, formats, TCF vendor id, setting names). `--json` prints it; the text is
/// rendered from it.
struct ListReport: Encodable, Sendable {
    var placements: [Placement]
    var networks: [Network]

    /// The report of `configuration`; `settings`: each network's setting names.
    init(_ configuration: CLIConfiguration, settings: [String: [String]]) {
        placements = configuration.mediation.placements.keys.sorted().compactMap { id in
            guard let placement = configuration.mediation.placements[id] else { return nil }
            return Placement(
                id: id, format: placement.format.description, mode: placement.mode.rawValue,
                deadlineMs: ListCommand.milliseconds(placement.deadline),
                lines: placement.lines.map { line in
                    Row(
                        kind: .line, network: line.network, placement: line.placement,
                        timeoutMs: ListCommand.milliseconds(line.timeout), floorEcpm: line.floorEcpm, ecpm: line.ecpm)
                },
                bidders: placement.bidders.map { bidder in
                    Row(
                        kind: .bidder, network: bidder.network, placement: bidder.placement,
                        timeoutMs: ListCommand.milliseconds(bidder.timeout), floorEcpm: bidder.floorEcpm, ecpm: nil)
                })
        }
        networks = configuration.networks.keys.sorted().compactMap { id in
            guard let network = configuration.networks[id] else { return nil }
            return Network(
                id: id, type: network.type, baseURL: ListCommand.redacted(network.baseURL),
                formats: network.factory.formats.map(\.rawValue).sorted(), tcfVendorID: network.tcfVendorID,
                settings: settings[id] ?? [])
        }
    }

    enum CodingKeys: String, CodingKey {
        case placements, networks
    }

    /// A placement and what it asks, in order.
    struct Placement: Encodable, Sendable {
        var id: String
        var format: String
        var mode: String
        var deadlineMs: Int64
        var lines: [Row]
        var bidders: [Row]

        enum CodingKeys: String, CodingKey {
            case id, format, mode, lines, bidders
            case deadlineMs = "deadline_ms"
        }
    }

    /// A waterfall line or a bidder: `{"network", "placement", "timeout_ms", "floor_ecpm"}`, and a line's `ecpm`
    /// (`null` when unset).
    struct Row: Encodable, Sendable {
        /// Which list the row is in.
        enum Kind: String, Sendable {
            case line, bidder
        }

        var kind: Kind
        var network: String
        var placement: String
        var timeoutMs: Int64
        var floorEcpm: Double?
        /// A line's publisher-set price; bidders have none.
        var ecpm: Double?

        enum CodingKeys: String, CodingKey {
            case network, placement, ecpm
            case timeoutMs = "timeout_ms"
            case floorEcpm = "floor_ecpm"
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(network, forKey: .network)
            try container.encode(placement, forKey: .placement)
            try container.encode(timeoutMs, forKey: .timeoutMs)
            try container.encode(floorEcpm, forKey: .floorEcpm)
            if kind == .line { try container.encode(ecpm, forKey: .ecpm) }
        }
    }

    /// A configured network; setting values are never part of it.
    struct Network: Encodable, Sendable {
        var id: String
        var type: String
        var baseURL: String
        var formats: [String]
        var tcfVendorID: Int?
        var settings: [String]

        enum CodingKeys: String, CodingKey {
            case id, type, formats, settings
            case baseURL = "base_url"
            case tcfVendorID = "tcf_vendor_id"
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(id, forKey: .id)
            try container.encode(type, forKey: .type)
            try container.encode(baseURL, forKey: .baseURL)
            try container.encode(formats, forKey: .formats)
            try container.encode(tcfVendorID, forKey: .tcfVendorID)
            try container.encode(settings, forKey: .settings)
        }
    }
}

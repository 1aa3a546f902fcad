import AdMediation
import ArgumentParser
import Foundation
import MediateKit

/// `mediate list` (issue 47 item 6): the configured placements (format, mode, lines and bidders in order) and networks
/// (type, base URL, formats, TCF vendor id, the names of their settings). Secrets are never printed: a setting's value
/// is not shown (only its name), and a base URL's user information and query values are replaced by `***`. Sends no
/// request.
struct ListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the configured placements (with their lines and formats) and networks (type, base URL).",
        discussion: """
            Sends no ad request. Settings are listed by name only, never their values (keys and signatures are \
            secrets); a base URL's credentials and query values are shown as ***.

            Examples:
              mediate list
              mediate list --config my.json --json
            """)

    @OptionGroup var options: ConfigOptions
    @OptionGroup var demoOptions: DemoOptions
    @Flag(name: .long, help: "JSON output.") var json = false

    /// The JSON object (`placements`, `networks`) of `configuration`; `settings`: each network's setting names.
    static func object(_ configuration: CLIConfiguration, settings: [String: [String]]) -> [String: Any] {
        let placements = configuration.mediation.placements.keys.sorted().compactMap { id -> [String: Any]? in
            guard let placement = configuration.mediation.placements[id] else { return nil }
            return [
                "id": id, "format": placement.format.description, "mode": placement.mode.rawValue,
                "deadline_ms": milliseconds(placement.deadline),
                "lines": placement.lines.map { line -> [String: Any] in
                    [
                        "network": line.network, "placement": line.placement,
                        "timeout_ms": milliseconds(line.timeout), "floor_ecpm": line.floorEcpm ?? NSNull(),
                        "ecpm": line.ecpm ?? NSNull(),
                    ]
                },
                "bidders": placement.bidders.map { bidder -> [String: Any] in
                    [
                        "network": bidder.network, "placement": bidder.placement,
                        "timeout_ms": milliseconds(bidder.timeout), "floor_ecpm": bidder.floorEcpm ?? NSNull(),
                    ]
                },
            ]
        }
        let networks = configuration.networks.keys.sorted().compactMap { id -> [String: Any]? in
            guard let network = configuration.networks[id] else { return nil }
            return [
                "id": id, "type": network.type, "base_url": redacted(network.baseURL),
                "formats": network.factory.formats.map(\.rawValue).sorted(),
                "tcf_vendor_id": network.tcfVendorID ?? NSNull(), "settings": settings[id] ?? [],
            ]
        }
        return ["placements": placements, "networks": networks]
    }

    /// The text form: a block per placement, then one per network.
    static func text(_ object: [String: Any]) -> [String] {
        let placements = object["placements"] as? [[String: Any]] ?? []
        let networks = object["networks"] as? [[String: Any]] ?? []
        var lines = ["placements (\(placements.count)):"]
        for placement in placements {
            lines.append(
                "  \(placement["id"] ?? "")  \(placement["format"] ?? "")  \(placement["mode"] ?? "")  deadline "
                    + "\(placement["deadline_ms"] ?? "") ms")
            let rows =
                (placement["lines"] as? [[String: Any]] ?? []).map { ("line", $0) }
                + (placement["bidders"] as? [[String: Any]] ?? []).map { ("bidder", $0) }
            for (index, (kind, row)) in rows.enumerated() {
                var text = "    \(index + 1). \(kind) \(row["network"] ?? "")/\(row["placement"] ?? "")  timeout "
                text += "\(row["timeout_ms"] ?? "") ms"
                if let floor = row["floor_ecpm"] as? Double { text += "  floor \(floor)" }
                if let ecpm = row["ecpm"] as? Double { text += "  ecpm \(ecpm)" }
                lines.append(text)
            }
        }
        lines.append("networks (\(networks.count)):")
        for network in networks {
            lines.append("  \(network["id"] ?? "")  \(network["type"] ?? "")  \(network["base_url"] ?? "")")
            let formats = (network["formats"] as? [String] ?? []).joined(separator: ", ")
            let settings = network["settings"] as? [String] ?? []
            var detail = "    formats: \(formats)"
            if let vendor = network["tcf_vendor_id"] as? Int { detail += "  tcf_vendor_id: \(vendor)" }
            detail +=
                settings.isEmpty ? "" : "  settings: \(settings.joined(separator: ", ")) (values hidden)"
            lines.append(detail)
        }
        return lines
    }

    /// Whole milliseconds of a configured duration (validated when the file was read).
    static func milliseconds(_ duration: Duration) -> Int64 { duration.nanosecondsClamped / 1_000_000 }

    /// `url` without secrets: its user information and each query value replaced by `***`.
    static func redacted(_ url: String) -> String {
        guard var components = URLComponents(string: url) else { return "***" }
        if components.user != nil { components.user = "***" }
        if components.password != nil { components.password = "***" }
        if let items = components.queryItems {
            components.queryItems = items.map { URLQueryItem(name: $0.name, value: $0.value == nil ? nil : "***") }
        }
        return components.string ?? "***"
    }

    /// Each network's setting names (every key but `type`, `base_url`, `tcf_vendor_id`), from the file's JSON.
    static func settingNames(_ data: Data) -> [String: [String]] {
        let root = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
        let networks = root?["networks"] as? [String: Any] ?? [:]
        return networks.compactMapValues { value in
            (value as? [String: Any]).map { network in
                network.keys.filter { !["type", "base_url", "tcf_vendor_id"].contains($0) }.sorted()
            }
        }
    }

    func run() async throws {
        let (configuration, settings) = try await Environment.with(
            options, demo: demoOptions, progress: Progress(enabled: false)
        ) { env -> (CLIConfiguration, [String: [String]]) in
            let data: Data
            if let path = options.config {
                data = try CLIConfiguration.read(path: path)
            } else if let sandbox = env.sandbox {
                data = demoOptions.demo == .arms ? Demo.armsConfiguration(sandbox) : Demo.configuration(sandbox)
            } else {
                data = Data()
            }
            return (env.configuration, Self.settingNames(data))
        }
        let object = Self.object(configuration, settings: settings)
        if json {
            let data = try JSONSerialization.data(
                withJSONObject: object, options: [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes])
            print(String(decoding: data, as: UTF8.self))
        } else {
            for line in Self.text(object) { print(TerminalText.escaped(line)) }
        }
    }
}

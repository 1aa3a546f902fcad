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

    /// The text form: a block per placement, then one per network.
    static func text(_ report: ListReport) -> [String] {
        var lines = ["placements (\(report.placements.count)):"]
        for placement in report.placements {
            lines.append(
                "  \(placement.id)  \(placement.format)  \(placement.mode)  deadline \(placement.deadlineMs) ms")
            let rows = placement.lines + placement.bidders
            for (index, row) in rows.enumerated() {
                var text = "    \(index + 1). \(row.kind.rawValue) \(row.network)/\(row.placement)  timeout "
                text += "\(row.timeoutMs) ms"
                if let floor = row.floorEcpm { text += "  floor \(floor)" }
                if let ecpm = row.ecpm { text += "  ecpm \(ecpm)" }
                lines.append(text)
            }
        }
        lines.append("networks (\(report.networks.count)):")
        for network in report.networks {
            lines.append("  \(network.id)  \(network.type)  \(network.baseURL)")
            var detail = "    formats: \(network.formats.joined(separator: ", "))"
            if let vendor = network.tcfVendorID { detail += "  tcf_vendor_id: \(vendor)" }
            detail +=
                network.settings.isEmpty
                ? "" : "  settings: \(network.settings.joined(separator: ", ")) (values hidden)"
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
        NetworkSettings.read(data).mapValues { settings in
            settings.keys.filter { !["type", "base_url", "tcf_vendor_id"].contains($0) }
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
        let report = ListReport(configuration, settings: settings)
        if json {
            print(ReportJSON.text(report))
        } else {
            for line in Self.text(report) { print(TerminalText.escaped(line)) }
        }
    }
}

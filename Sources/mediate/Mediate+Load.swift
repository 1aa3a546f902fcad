import AdMediation
import AdNetworkConformance
import AdStorage
import ArgumentParser
import CurlTransport
import DemandSandbox
import Foundation
import GrowthCatAds
import Logging
import MediateKit
import Tracing

/// `mediate load --format`.
enum LoadFormat: String, CaseIterable, Sendable, ExpressibleByArgument {
    case text, json, html

    /// The format a file name's extension names (`.html`/`.htm`, `.json`); nil for any other.
    init?(extensionOf path: String) {
        switch ReportFormat(extensionOf: path) {
        case .html: self = .html
        case .json: self = .json
        default: return nil
        }
    }
}

struct Load: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "One request (mediated, or one network alone) with its full trace.",
        discussion: """
            Examples:
              # the demo's waterfall, line by line
              mediate load --placement home_tile
              mediate load --config my.json --placement main_banner --network cb --json
              # the request's timeline (a Gantt chart of its lines and HTTP requests)
              mediate load --placement main_banner --format html > request.html
              # the request's spans as OTLP/JSON
              mediate load --placement main_banner --trace-file trace.json
              mediate load --config my.json --placement home_tile --us-privacy 1YNN --coppa
              # what each network may receive of a user id under these signals
              mediate load --placement main_banner --app-user-id u1 --us-privacy 1yyn
            """)

    @OptionGroup var options: ConfigOptions
    @OptionGroup var demoOptions: DemoOptions
    @OptionGroup(title: "Privacy signals (sent with the request)") var privacy: PrivacyOptions
    @Option(name: .long, help: "The mediated placement.") var placement: String
    @Option(name: .long, help: "Ask this network alone (its line's placement id) instead of the waterfall.")
    var network: String?
    @Option(
        name: .customLong("app-user-id"),
        help: "The app's user id, sent where the privacy rules allow user ids (each line says what they restricted).")
    var appUserID: String?
    @Option(
        name: .customLong("advertising-id"),
        help: "The device's advertising id (IDFA, GAID): sent where a network carries it and the privacy rules allow.")
    var advertisingID: String?
    @Flag(name: .long, help: "JSON output (the same as --format json).") var json = false
    @Option(
        name: .customLong("format"),
        help: ArgumentHelp(
            "Output format: text, json, or html (one self-contained page: the request's timeline and its lines); "
                + "default: from --output's extension (.html, .json), else text."))
    var formatOption: LoadFormat?
    @Option(name: .long, help: "Write the output to this file instead of stdout.") var output: String?
    @Flag(
        name: .long,
        help: ArgumentHelp(
            "Show each HTTP exchange's request and response bodies (text and json; each cut at 4096 bytes; the "
                + "configured secrets and the user's ids redacted)."))
    var bodies = false
    @Option(
        name: .long, help: "Write the request's spans (mediation, ad lines, HTTP requests) to this file as OTLP/JSON.")
    var traceFile: String?

    func validate() throws {
        if let output, let problem = OutputPath.problem(output, option: "--output") {
            throw ValidationError(problem)
        }
    }

    /// The text form's rows, columns aligned: source, outcome, latency, then what else there is to say.
    static func alignedRows(_ rows: [[String]]) -> [String] {
        let escaped = rows.map { $0.map(TerminalText.escaped) }
        let widths = (0..<3).map { column in escaped.map { column < $0.count ? $0[column].count : 0 }.max() ?? 0 }
        return escaped.map { row in
            let cells = row.enumerated().map { column, cell in
                switch column {
                case 0, 1: cell.padding(toLength: widths[column], withPad: " ", startingAt: 0)
                case 2: String(repeating: " ", count: max(0, widths[2] - cell.count)) + cell
                default: cell
                }
            }
            return "  " + cells.joined(separator: "  ")
        }
    }

    /// What `--bodies` hides: the networks' setting values and this request's user ids.
    private func redaction(_ env: Environment) -> Redaction {
        Redaction(env.secrets + [appUserID, advertisingID].compactMap { $0 })
    }

    /// Writes `text` to `--output`, or prints it.
    private func emit(_ text: String) throws {
        guard let output else {
            print(text)
            return
        }
        do { try (text + "\n").write(toFile: output, atomically: true, encoding: .utf8) } catch {
            throw AdError(.configuration, "--output: cannot write \(output): \(error.localizedDescription)")
        }
    }

    func run() async throws {
        let format = json ? LoadFormat.json : formatOption ?? output.flatMap(LoadFormat.init(extensionOf:)) ?? .text
        // The HTML page draws the request's spans: they are recorded for it as for --trace-file.
        let tracer = traceFile == nil && format != .html ? nil : TraceFile.tracer()
        try await Environment.with(
            options, demo: demoOptions, progress: Progress(enabled: false), tracer: tracer, recordBodies: bodies
        ) { env in
            guard let placementConfig = env.configuration.mediation.placements[placement] else {
                let known = env.configuration.mediation.placements.keys.sorted().joined(separator: ", ")
                throw AdError(.configuration, "--placement: unknown placement \"\(placement)\" (configured: \(known))")
            }
            let adFormat = placementConfig.format
            var winner: LoadWinner? = nil
            var mediated: MediationTrace? = nil
            var alone: AloneAnswer? = nil
            if let network {
                guard let line = placementConfig.lines.first(where: { $0.network == network }),
                    let adapter = env.networks[network]
                else {
                    throw AdError(.configuration, "--network: no line of \(placement) uses network \"\(network)\"")
                }
                let start = ContinuousClock.now
                var request = AdRequest(
                    placement: line.placement, format: adFormat, userID: appUserID, privacy: privacy.signals,
                    testMode: true, timeout: line.timeout)
                request.advertisingID = advertisingID
                // What the gate restricts for this network (the load itself goes through the same gate).
                var gated = request
                let verdict = (adapter as? PrivacyGatedNetwork)?.gate(&gated)
                let restrictions = verdict?.mayBeAsked == true ? verdict?.reasons ?? [] : []
                let outcome: AloneAnswer.Outcome
                do {
                    let result = try await adapter.load(request)
                    outcome = result.ad == nil ? .noFill : .fill(ecpm: result.ad?.ecpm)
                    if let ad = result.ad {
                        winner = LoadWinner(
                            network: network, ecpm: ad.ecpm, adID: ad.creative.id, revenue: ad.revenue)
                        ad.invalidate()
                    }
                } catch let error as AdError where error.code == .privacyBlocked {
                    // The gate refused to ask it: reported as the mediated path reports a blocked line.
                    outcome = .blocked(error.message)
                } catch let error as AdError {
                    outcome = .error(error)
                }
                alone = AloneAnswer(
                    network: network, placement: line.placement, privacy: restrictions, outcome: outcome,
                    latencyMs: round3((ContinuousClock.now - start).milliseconds))
            } else {
                var request = AdRequest(
                    placement: placement, format: adFormat, userID: appUserID, privacy: privacy.signals, testMode: true)
                request.advertisingID = advertisingID
                let outcome = await env.mediator.loadWithTrace(request)
                if case .success(let result) = outcome.result, let ad = result.ad {
                    winner = LoadWinner(
                        network: outcome.trace.winner?.network ?? ad.networkID, ecpm: ad.ecpm, adID: ad.creative.id,
                        revenue: ad.revenue)
                    ad.invalidate()
                }
                mediated = outcome.trace
                if case .failure(let error) = outcome.result, error.code != .timeout {
                    throw error
                }
            }
            let recorded = env.bodies?.recorded
            let report = LoadReport(
                placement: placement, winner: winner, mediated: mediated, alone: alone,
                exchanges: recorded?.exchanges, redaction: redaction(env))
            if let traceFile, let tracer {
                try TraceFile.write(tracer.finishedSpans, to: traceFile)
            }
            switch format {
            case .html: try emit(Reports.requestPage(report, spans: tracer?.finishedSpans ?? []))
            case .json: try emit(ReportJSON.text(report))
            case .text:
                try emit(Self.text(report, dropped: recorded?.dropped ?? 0).joined(separator: "\n"))
            }
            // A request that no line and no bidder answered (every one failed or timed out) is not a no-fill result:
            // exit 1 with the reason, as `compare` exits 3 when every request failed.
            if report.nothingAnswered {
                FileHandle.standardError.write(
                    Data("error: every line of \(TerminalText.escaped(placement)) failed: nothing answered\n".utf8))
                throw ExitCode(1)
            }
        }
    }
}

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

/// `mediate`: compare fill across adapters, debug one request, run the sandbox and the conformance kit.
/// Exit codes: 0 success, 1 a failed check, 2 bad usage or configuration.
@main
struct Mediate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mediate",
        abstract: "Compare fill across ad networks, debug a request, run the demand sandbox and the conformance kit.",
        subcommands: [Compare.self, Load.self, Show.self, SandboxCommand.self, Conformance.self],
        defaultSubcommand: Compare.self)

    static func main() async {
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch let error as AdError {
            FileHandle.standardError.write(Data("error: \(error.message)\n".utf8))
            Foundation.exit(error.code == .configuration || error.code == .unsupported ? 2 : 1)
        } catch {
            let code = exitCode(for: error)
            if code == .validationFailure {
                FileHandle.standardError.write(Data((fullMessage(for: error) + "\n").utf8))
                Foundation.exit(2)
            }
            exit(withError: error)
        }
    }
}

/// Options shared by the commands that read a configuration.
/// `--demo`: the built-in demos.
enum DemoName: String, CaseIterable, Sendable, ExpressibleByArgument {
    /// Every adapter of this build against the sandbox.
    case standard
    /// A drifting waterfall (`drift_banner`) and an auction (`auction_banner`), for `compare --arms`.
    case arms
}

struct ConfigOptions: ParsableArguments {
    @Option(
        name: .long,
        help: "Configuration file (JSON). Without it, the demand sandbox starts in-process with the demo configuration."
    )
    var config: String?
    @Option(
        name: .long,
        help:
            "Without --config, the built-in demo: standard (every adapter) or arms (drift and an auction, for --arms).")
    var demo: DemoName = .standard
    @Option(
        name: .customLong("optimizer-state"),
        help: "SQLite file where self-ordering placements keep what they learned: restored at start, saved at the end.")
    var optimizerState: String?
    @Option(
        name: .customLong("log-level"),
        help: "Log to stderr at this level: trace, debug, info, notice, warning, error, critical (default: no logs).")
    var logLevel: String?

    func validate() throws {
        if let logLevel, Logger.Level(rawValue: logLevel) == nil {
            throw ValidationError(
                "--log-level: one of \(Logger.Level.allCases.map(\.rawValue).joined(separator: ", ")), got \(logLevel)")
        }
    }

    /// Sends the library's logs to stderr at `--log-level`, and nowhere without it (the app, not the library, chooses
    /// the backend; swift-log's default would print info records).
    func bootstrapLogging() {
        guard let level = logLevel.flatMap(Logger.Level.init(rawValue:)) else {
            LoggingSystem.bootstrap { _ in SwiftLogNoOpLogHandler() }
            return
        }
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
    }
}

/// A loaded configuration with its networks, mediator, HTTP client and (for the demo) sandbox.
struct Environment {
    let configuration: CLIConfiguration
    let networks: [String: any AdNetwork]
    let mediator: Mediator
    let http: CurlHTTPClient
    let sandbox: RunningSandbox?
    let store: SQLiteStateStore?

    static func load(_ options: ConfigOptions, progress: Progress, tracer: (any Tracer)? = nil) async throws
        -> Environment
    {
        options.bootstrapLogging()
        let path = options.config
        var sandbox: RunningSandbox?
        let data: Data
        if let path {
            guard let contents = FileManager.default.contents(atPath: path) else {
                throw AdError(.configuration, "--config: cannot read \(path)")
            }
            data = contents
        } else {
            let arms = options.demo == .arms
            let started = try await DemandSandbox.start(scenario: arms ? Demo.armsScenario : Demo.scenario)
            progress.say("demo\(arms ? " (arms)" : ""): demand sandbox on \(started.rootURL)")
            sandbox = started
            data = arms ? Demo.armsConfiguration(started) : Demo.configuration(started)
        }
        let configuration = try CLIConfiguration.parse(data)
        let http = CurlHTTPClient(tracer: tracer)
        let networks = try configuration.makeNetworks(http: http)
        let mediator = try Mediator(
            networks: Array(networks.values), configuration: configuration.mediation, tracer: tracer)
        var store: SQLiteStateStore?
        if let path = options.optimizerState {
            do {
                let opened = try SQLiteStateStore(path: path)
                try await mediator.restoreOptimizerState(from: opened)
                store = opened
            } catch {
                await configuration.shutdown(networks)
                await http.shutdown()
                await sandbox?.shutdown()
                throw AdError(.configuration, "--optimizer-state: \(path): \(error)")
            }
        }
        return Environment(
            configuration: configuration, networks: networks, mediator: mediator, http: http, sandbox: sandbox,
            store: store)
    }

    /// Saves what the self-ordering placements learned (with `--optimizer-state`), then shuts everything down.
    func close() async {
        if let store {
            do { try await mediator.saveOptimizerState(to: store) } catch {
                FileHandle.standardError.write(Data("warning: --optimizer-state: \(error)\n".utf8))
            }
        }
        await configuration.shutdown(networks)
        await http.shutdown()
        await sandbox?.shutdown()
    }
}

struct Compare: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract:
            "Run N mediated requests per placement and N per line's network alone; report fill, latency, errors, win "
            + "share."
    )

    @OptionGroup var options: ConfigOptions
    @Option(name: .long, help: "Placements to compare (repeatable; default: all).") var placement: [String] = []
    @Option(name: .long, help: "Requests per placement and per line.") var requests: Int = 200
    @Option(name: .long, help: "Requests in flight at once.") var concurrency: Int = 8
    @Option(name: .long, help: "Output format.") var format: ReportFormat = .table
    @Option(name: .long, help: "Write the report to this file instead of stdout.") var output: String?
    @Flag(name: .long, help: "No progress on stderr.") var quiet = false
    @Option(
        name: .long,
        help: ArgumentHelp(
            "Compare arms on the same traffic instead: two or more of static, optimized, waterfall, auction (e.g. "
                + "static,optimized). --requests is per arm; table or json.")
    )
    var arms: String?

    func validate() throws {
        guard requests > 0 else { throw ValidationError("--requests must be positive, got \(requests)") }
        if let arms {
            do { _ = try Arm.parse(arms) } catch { throw ValidationError(error.message) }
            guard format == .table || format == .json else {
                throw ValidationError("--arms reports as table or json, not \(format.rawValue)")
            }
        }
        guard concurrency > 0 else { throw ValidationError("--concurrency must be positive, got \(concurrency)") }
    }

    func run() async throws {
        let progress = Progress(enabled: !quiet)
        let env = try await Environment.load(options, progress: progress)
        let all = env.configuration.mediation.placements.keys.sorted()
        for id in placement where !all.contains(id) {
            await env.close()
            throw AdError(
                .configuration, "--placement: unknown placement \"\(id)\" (configured: \(all.joined(separator: ", ")))")
        }
        let chosen = placement.isEmpty ? all : placement
        if let arms {
            let parsed: [Arm]
            do { parsed = try Arm.parse(arms) } catch {
                await env.close()
                throw error
            }
            progress.say(
                "compare: \(chosen.count) placement(s), arms \(arms), \(requests) requests per arm, concurrency "
                    + "\(concurrency)"
            )
            let runner = ArmsRunner(
                configuration: env.configuration, networks: env.networks, requests: requests, concurrency: concurrency,
                progress: progress)
            var results: [(placement: String, arms: [(arm: Arm, tally: Tally)])] = []
            for id in chosen {
                do { results.append((id, try await runner.run(placement: id, arms: parsed))) } catch {
                    await env.close()
                    throw error
                }
            }
            await env.close()
            try emit(ArmsRunner.render(results, json: format == .json), progress: progress)
            return
        }
        progress.say("compare: \(chosen.count) placement(s), \(requests) requests each, concurrency \(concurrency)")
        let runner = CompareRunner(
            configuration: env.configuration, networks: env.networks, mediator: env.mediator,
            requests: requests, concurrency: concurrency, progress: progress)
        let reports = await runner.run(placements: chosen)
        await env.close()
        try emit(Reports.render(reports, as: format), progress: progress)
    }

    /// Writes `text` to `--output`, or prints it.
    private func emit(_ text: String, progress: Progress) throws {
        if let output {
            do { try (text + "\n").write(toFile: output, atomically: true, encoding: .utf8) } catch {
                throw AdError(.configuration, "--output: cannot write \(output): \(error.localizedDescription)")
            }
            progress.say("wrote \(output)")
        } else {
            print(text)
        }
    }
}

struct Load: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "One request (mediated, or one network alone) with its full trace.")

    @OptionGroup var options: ConfigOptions
    @Option(name: .long, help: "The mediated placement.") var placement: String
    @Option(name: .long, help: "Ask this network alone (its line's placement id) instead of the waterfall.")
    var network: String?
    @Flag(name: .long, help: "JSON output.") var json = false
    @Option(
        name: .long, help: "Write the request's spans (mediation, ad lines, HTTP requests) to this file as OTLP/JSON.")
    var traceFile: String?

    /// `{"value_usd", "precision", "line", "ab_label"}` (the last two null when no mediator served the ad).
    static func revenueJSON(_ revenue: ImpressionRevenue) -> [String: Any] {
        [
            "value_usd": revenue.value, "precision": revenue.precision.rawValue,
            "line": revenue.line?.index ?? NSNull(),
            "ab_label": revenue.line?.abLabel ?? NSNull(),
        ]
    }

    func run() async throws {
        let tracer = traceFile == nil ? nil : TraceFile.tracer()
        let env = try await Environment.load(options, progress: Progress(enabled: false), tracer: tracer)
        defer { Task { await env.close() } }
        guard let placementConfig = env.configuration.mediation.placements[placement],
            let format = placementConfig.adFormat
        else {
            await env.close()
            throw AdError(.configuration, "--placement: unknown placement \"\(placement)\"")
        }
        var trace: [[String: Any]] = []
        var bids: [[String: Any]] = []
        var winner: [String: Any]? = nil
        var filled = false
        if let network {
            guard let line = placementConfig.lines.first(where: { $0.network == network }),
                let adapter = env.networks[network]
            else {
                await env.close()
                throw AdError(.configuration, "--network: no line of \(placement) uses network \"\(network)\"")
            }
            let start = ContinuousClock.now
            var entry: [String: Any] = ["network": network, "placement": line.placement]
            do {
                let result = try await adapter.load(
                    AdRequest(
                        placement: line.placement, format: format, testMode: true,
                        timeout: .milliseconds(line.timeoutMs)))
                entry["outcome"] = result.ad == nil ? "no_fill" : "fill"
                entry["ecpm"] = result.ad?.ecpm ?? NSNull()
                entry["error"] = NSNull()
                if let ad = result.ad {
                    filled = true
                    winner = [
                        "network": network, "ecpm": ad.ecpm ?? NSNull(), "ad_id": ad.creative.id,
                        "revenue": Self.revenueJSON(ad.revenue),
                    ]
                    ad.invalidate()
                }
            } catch let error as AdError {
                entry["outcome"] = "error"
                entry["ecpm"] = NSNull()
                entry["error"] = ["code": error.code.name, "message": error.message]
            }
            entry["latency_ms"] = round3((ContinuousClock.now - start).milliseconds)
            entry["reason"] = NSNull()
            trace.append(entry)
        } else {
            let outcome = await env.mediator.loadWithTrace(
                AdRequest(placement: placement, format: format, testMode: true))
            if case .success(let result) = outcome.result, let ad = result.ad {
                filled = true
                winner = [
                    "network": outcome.trace.winner?.network ?? ad.networkID, "ecpm": ad.ecpm ?? NSNull(),
                    "ad_id": ad.creative.id,
                    "revenue": Self.revenueJSON(ad.revenue),
                ]
                ad.invalidate()
            }
            for line in outcome.trace.lines {
                var entry: [String: Any] = [
                    "network": line.network, "placement": line.placement, "outcome": line.outcome.name,
                    "latency_ms": line.latency.map { round3($0.milliseconds) } ?? NSNull(),
                    "ecpm": line.ecpm ?? NSNull(),
                ]
                switch line.outcome {
                case .error(let error):
                    entry["error"] = ["code": error.code.name, "message": error.message]
                    entry["reason"] = NSNull()
                case .skipped(let reason):
                    entry["error"] = NSNull()
                    entry["reason"] = reason.rawValue
                case .noFill(let reason):
                    entry["error"] = NSNull()
                    entry["reason"] = reason
                default:
                    entry["error"] = NSNull()
                    entry["reason"] = NSNull()
                }
                trace.append(entry)
            }
            for bid in outcome.trace.bids {
                var entry: [String: Any] = [
                    "network": bid.network, "placement": bid.placement, "outcome": bid.outcome.name,
                    "latency_ms": bid.latency.map { round3($0.milliseconds) } ?? NSNull(),
                    "price": bid.price ?? NSNull(),
                ]
                switch bid.outcome {
                case .error(let error): entry["reason"] = "\(error.code.name): \(error.message)"
                case .skipped(let reason): entry["reason"] = reason.rawValue
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
            if case .failure(let error) = outcome.result, error.code != .timeout {
                await env.close()
                throw error
            }
        }
        await env.close()
        if let traceFile, let tracer {
            try TraceFile.write(tracer.finishedSpans, to: traceFile)
        }
        if json {
            let object: [String: Any] = [
                "placement": placement, "filled": filled, "winner": winner ?? NSNull(), "trace": trace, "bids": bids,
            ]
            let data = try JSONSerialization.data(
                withJSONObject: object, options: [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes])
            print(String(decoding: data, as: UTF8.self))
        } else {
            print(
                "\(placement): "
                    + "\(filled ? "filled by \(winner?["network"] ?? "?") (ad \(winner?["ad_id"] ?? "?"))" : "no fill")"
            )
            for entry in trace {
                let latency = (entry["latency_ms"] as? Double).map { String(format: "%.1f ms", $0) } ?? "-"
                var line =
                    "  \(entry["network"] ?? "")/\(entry["placement"] ?? "")  \(entry["outcome"] ?? "")  \(latency)"
                if let ecpm = entry["ecpm"] as? Double { line += String(format: "  eCPM %.2f", ecpm) }
                if let reason = entry["reason"] as? String { line += "  (\(reason))" }
                if let error = entry["error"] as? [String: String] {
                    line += "  \(error["code"] ?? ""): \(error["message"] ?? "")"
                }
                print(line)
            }
            for entry in bids {
                let latency = (entry["latency_ms"] as? Double).map { String(format: "%.1f ms", $0) } ?? "-"
                var line =
                    "  bid \(entry["network"] ?? "")/\(entry["placement"] ?? "")  \(entry["outcome"] ?? "")  \(latency)"
                if let price = entry["price"] as? Double { line += String(format: "  price %.2f", price) }
                if let reason = entry["reason"] as? String { line += "  (\(reason))" }
                if let auction = entry["auction"] as? [String: Any] {
                    line +=
                        auction["result"] as? String == "won"
                        ? String(format: "  won, clears at %.2f", auction["clearing_price"] as? Double ?? 0)
                        : "  lost (\(auction["loss_code"] ?? "") \(auction["loss_reason"] ?? ""))"
                }
                print(line)
            }
        }
    }
}

struct Show: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract:
            "Load, then drive the ad's presentation headlessly: impression, optional click, close; print what was sent."
    )

    @OptionGroup var options: ConfigOptions
    @Option(name: .long, help: "The mediated placement.") var placement: String
    @Option(name: .customLong("app-user-id"), help: "The app's user id.") var appUserID: String?
    @Flag(name: .long, help: "Click the ad.") var click = false
    @Option(name: .customLong("watch-seconds"), help: "Simulated seconds on screen before closing.") var watchSeconds:
        Double = 5
    @Flag(name: .long, help: "JSON output.") var json = false

    func validate() throws {
        guard watchSeconds.isFinite, watchSeconds >= 0, watchSeconds <= 3600 else {
            throw ValidationError("--watch-seconds must be 0…3600, got \(watchSeconds)")
        }
    }

    /// `--watch-seconds` as a duration (validated to 0…3600 s).
    private var watch: Duration { OutsideValue.duration(seconds: watchSeconds) ?? .zero }

    func run() async throws {
        let env = try await Environment.load(options, progress: Progress(enabled: false))
        guard let placementConfig = env.configuration.mediation.placements[placement],
            let format = placementConfig.adFormat
        else {
            await env.close()
            throw AdError(.configuration, "--placement: unknown placement \"\(placement)\"")
        }
        let clock = ManualAdClock()
        let outcome = await env.mediator.loadWithTrace(
            AdRequest(placement: placement, format: format, userID: appUserID, testMode: true))
        guard case .success(let result) = outcome.result, let ad = result.ad else {
            await env.close()
            print(
                json
                    ? #"{"placement":"\#(placement)","filled":false,"events":[]}"#
                    : "\(placement): no fill, nothing shown")
            throw ExitCode(1)
        }
        var sent: [[String: Any]] = []
        func report(_ event: AdEvent) async {
            do {
                let first = try await ad.report(event)
                sent.append([
                    "at_s": Double(clock.now.nanoseconds) / 1e9, "event": event.description, "sent": first,
                    "error": NSNull(),
                ])
            } catch {
                sent.append([
                    "at_s": Double(clock.now.nanoseconds) / 1e9, "event": event.description, "sent": false,
                    "error": "\(error)",
                ])
            }
        }
        var reward: [String: Any]? = nil
        var flushed: [String: Any]? = nil
        if let gc = env.networks[ad.networkID] as? GrowthCatNetwork, let gcAd = gc.growthCatAd(for: ad) {
            // GrowthCat: the presentation rules decide the events and when the close button appears.
            var (session, first) = GrowthCatPresentation.present(gcAd, at: clock.now)
            for event in first { await report(Self.adEvent(event)) }
            // The seed validates a reward once the minimum view time is reached, not only at close.
            func validateReward(_ figures: (viewedSeconds: Double, completed: Bool)) async {
                guard let user = appUserID else {
                    reward = ["validated": false, "error": "--app-user-id is required to validate a reward"]
                    return
                }
                do {
                    let answer = try await gc.client.validateAdReward(
                        for: gcAd, appUserID: user, sessionID: nil,
                        viewedSeconds: figures.viewedSeconds, completed: figures.completed)
                    reward = [
                        "validated": answer.rewardValidated, "name": answer.reward?.name ?? NSNull(),
                        "amount": answer.reward?.amount ?? NSNull(), "at_s": Double(clock.now.nanoseconds) / 1e9,
                    ]
                } catch {
                    reward = ["validated": false, "error": "\(error)"]
                }
            }
            let end = AdInstant.zero + watch
            var second = 0.0
            while clock.now < end {
                second += 1
                await clock.advance(to: min(end, .zero + .seconds(Int64(second))))
                if click && second == 1 { for event in session.click() { await report(Self.adEvent(event)) } }
                for event in session.advance(to: clock.now) { await report(Self.adEvent(event)) }
                if let figures = session.rewardValidation(at: clock.now) { await validateReward(figures) }
            }
            switch session.close(at: clock.now) {
            case (.notYet(let availableAt), _):
                sent.append([
                    "at_s": Double(clock.now.nanoseconds) / 1e9, "event": "close refused", "sent": false,
                    "error":
                        "the close button appears at "
                        + "\(availableAt.map { "\(Double($0.nanoseconds) / 1e9) s" } ?? "the end")",
                ])
                if gcAd.isRewarded {
                    reward = ["validated": false, "error": "the ad was not watched long enough to be closed"]
                }
            case (.closed(let validate), let events):
                for event in events { await report(Self.adEvent(event)) }
                if let validate { await validateReward(validate) }
            }
            let report = await gc.client.flushAdEvents()
            flushed = ["sent": report.sent, "dropped": report.dropped, "remaining": report.remaining]
        } else {
            await report(.impression)
            if click {
                await clock.advance(by: watch / 2)
                await report(.click)
            }
            await clock.advance(to: .zero + watch)
            await report(.closed)
        }
        ad.invalidate()
        await env.close()
        let failures = sent.filter { !($0["error"] is NSNull) }.count
        if json {
            let object: [String: Any] = [
                "placement": placement, "filled": true, "network": ad.networkID, "ad_id": ad.creative.id,
                "events": sent, "reward": reward ?? NSNull(), "flush": flushed ?? NSNull(),
            ]
            let data = try JSONSerialization.data(
                withJSONObject: object, options: [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes])
            print(String(decoding: data, as: UTF8.self))
        } else {
            print("\(placement): showing \(ad.creative.id) from \(ad.networkID) (\(ad.creative.kind))")
            for event in sent {
                print(
                    String(
                        format: "  t=%5.1fs  %@  %@", event["at_s"] as? Double ?? 0, event["event"] as? String ?? "",
                        (event["error"] as? String) ?? ((event["sent"] as? Bool) == true ? "sent" : "already sent")))
            }
            if let reward {
                print(
                    "  reward: \(reward["validated"] as? Bool == true ? "validated, \(reward["amount"] ?? "") \(reward["name"] ?? "")" : "not granted (\(reward["error"] ?? "the server refused it"))")"
                )
            } else {
                print("  reward: none (not a rewarded ad)")
            }
            if let flushed {
                print("  events flushed: \(flushed["sent"] ?? 0) sent, \(flushed["remaining"] ?? 0) still queued")
            }
        }
        if failures > 0 { throw ExitCode(1) }
    }

    static func adEvent(_ event: GrowthCatPresentation.Event) -> AdEvent {
        switch event.name {
        case .impression: .impression
        case .click: .click
        case .videoStart: .videoStart
        case .videoProgress:
            .videoProgress(percent: OutsideValue.integer(event.metadata["progress_pct"] ?? "", in: 0...100) ?? 0)
        case .videoComplete: .videoComplete
        case .adClosed: .closed
        case .adReported: .reported(reason: event.metadata["reason"] ?? "")
        }
    }
}

struct SandboxCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sandbox", abstract: "Run the demand sandbox in the foreground and print its base URLs.")

    @Option(name: .long, help: "Scenario file (JSON).") var scenario: String?
    @Flag(name: .long, help: "Serve the built-in demo's scenario (what `mediate compare` without --config runs).")
    var demo = false
    @Option(name: .long, help: "Write the demo's configuration, pointing at this sandbox, to this file (for --config).")
    var writeConfig: String?
    @Option(name: .long, help: "Port (0 = any free port).") var port: Int = 0

    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port must be 0…65535, got \(port)") }
        if demo && scenario != nil { throw ValidationError("--demo and --scenario cannot be combined") }
    }

    func run() async throws {
        var loaded = demo ? Demo.scenario : SandboxScenario()
        if let scenario {
            guard let data = FileManager.default.contents(atPath: scenario) else {
                throw AdError(.configuration, "--scenario: cannot read \(scenario)")
            }
            do { loaded = try SandboxScenario.decode(json: data) } catch {
                throw AdError(.configuration, "--scenario: \(error)")
            }
        }
        var configuration = SandboxConfiguration()
        configuration.port = port
        let sandbox = try await DemandSandbox.start(scenario: loaded, configuration: configuration)
        print("growthcat  \(sandbox.growthcatBaseURL)")
        print("mars       \(sandbox.marsBaseURL)")
        print("chartboost \(sandbox.chartboostBaseURL)")
        print("appopen    \(sandbox.appOpenBaseURL)")
        print("admin      \(sandbox.adminURL)")
        if let writeConfig {
            guard FileManager.default.createFile(atPath: writeConfig, contents: Demo.configuration(sandbox)) else {
                await sandbox.shutdown()
                throw AdError(.configuration, "--write-config: cannot write \(writeConfig)")
            }
            print("config     \(writeConfig)")
        }
        fflush(nil)
        while true { try await Task.sleep(for: .seconds(3600)) }
    }
}

struct Conformance: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the conformance kit against a configured network; one line per scenario; exit 1 if any fails.")

    @OptionGroup var options: ConfigOptions
    @Option(name: .long, help: "The network to check.") var network: String
    @Option(
        name: .long,
        help: ArgumentHelp(
            "The mediated placement whose line or bidder for this network gives the fill request (default: the first "
                + "that uses it).")
    ) var placement: String?

    func run() async throws {
        let env = try await Environment.load(options, progress: Progress(enabled: false))
        guard let base = env.configuration.networks[network] else {
            await env.close()
            throw AdError(.configuration, "--network: unknown network \"\(network)\"")
        }
        let candidates = env.configuration.mediation.placements.sorted { $0.key < $1.key }
            .filter { placement == nil || $0.key == placement }
            .compactMap { id, config -> (PlacementConfiguration, String)? in
                (config.lines.first { $0.network == network }?.placement
                    ?? config.bidders.first { $0.network == network }?.placement)
                    .map { (config, $0) }
            }
        guard let (placementConfig, linePlacement) = candidates.first, let format = placementConfig.adFormat else {
            await env.close()
            throw AdError(.configuration, "--placement: no placement has a line or bidder for network \"\(network)\"")
        }
        // The kit watches the wire through a recording client wrapped around the real one.
        let recording = RecordingHTTPClient(wrapping: env.http)
        let single = CLIConfiguration(
            networks: [network: base], mediation: env.configuration.mediation, factories: env.configuration.factories)
        guard let adapter = try single.makeNetworks(http: recording)[network] else {
            await env.close()
            throw ExitCode(2)
        }
        let subject = ConformanceSubject(
            network: adapter, wire: recording, fillRequest: AdRequest(placement: linePlacement, format: format))
        var results = await AdNetworkConformance.runAll(subject)
        await single.shutdown([network: adapter])
        if placementConfig.bidders.contains(where: { $0.network == network }) {
            // A network used as a bidder also runs the bidder scenarios, on a clock the kit moves (expiry without
            // waiting).
            let clock = ManualAdClock()
            if let bidder = try single.makeNetworks(http: recording, clock: clock)[network] {
                let request = AdRequest(placement: linePlacement, format: format, timeout: .seconds(2))
                results += await BidderConformance.runAll(
                    BidderSubject(network: bidder, wire: recording, bidRequest: request, clock: clock))
                await single.shutdown([network: bidder])
            }
        }
        await env.close()
        var failed = 0
        for result in results {
            switch result.status {
            case .passed: print("PASS  \(result.scenario)")
            case .skipped(let why): print("SKIP  \(result.scenario): \(why)")
            case .failed(let failure):
                failed += 1
                print("FAIL  \(result.scenario): expected \(failure.expectation); observed \(failure.observed)")
            }
        }
        print("\(results.count - failed) of \(results.count) scenarios did not fail (\(failed) failed)")
        if failed > 0 { throw ExitCode(1) }
    }
}

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

/// `--progress`: how progress is drawn on stderr.
enum ProgressStyle: String, CaseIterable, Sendable, ExpressibleByArgument {
    /// Redrawn in place on a terminal, plain otherwise.
    case auto
    /// One line per phase, and at most one every `--progress-interval` while a phase runs.
    case plain
}

struct Compare: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract:
            "Run N mediated requests per placement and N per line's network alone; report fill, latency, errors, win "
            + "share.",
        discussion: """
            Exit codes: 0 ok · 1 a threshold failed (--fail-under-fill, --max-error-rate; the report is still \
            printed or written) · 2 bad usage or configuration · 3 every request failed · 130 interrupted \
            (partial report written).

            Examples:
              # every placement of the built-in demo
              mediate compare
              mediate compare --config my.json --placement home_tile --requests 2000
              # CI: exit 1 when a waterfall fills under 60 % or a source errs over 5 %
              mediate compare --config my.json --fail-under-fill 60 --max-error-rate 5
              # a reproducible run
              mediate compare --seed 7 --concurrency 1 --format json --output r.json
              # what changed since that run
              mediate compare --seed 7 --baseline r.json --format html --output r.html
              mediate compare --demo arms --arms static,optimized --requests 4000
              mediate compare --config my.json --gdpr 1 --tcf CPXxRfAPXxRfAAfKABENB --gpp-sid 2
            """
    )

    @OptionGroup var options: ConfigOptions
    @OptionGroup var demoOptions: DemoOptions
    @OptionGroup(title: "Privacy signals (sent with every request)") var privacy: PrivacyOptions
    @Option(name: .long, help: "Placements to compare (repeatable; default: all).") var placement: [String] = []
    // `.unconditional`: `--requests -5` reads -5 (and is refused as negative) instead of "Missing value".
    @Option(name: .long, parsing: .unconditional, help: "Requests per placement and per line.")
    var requests: Int = 200
    @Option(name: .long, parsing: .unconditional, help: "Requests in flight at once.") var concurrency: Int = 8
    @Option(
        name: .customLong("format"),
        help: "Output format (default: from --output's extension, .html .json .csv, else table).")
    var formatOption: ReportFormat?
    @Option(name: .long, help: "Write the report to this file instead of stdout.") var output: String?

    /// `--format`, else the format `--output`'s extension names (`r.html` is an HTML report, not a text table),
    /// else the table.
    var format: ReportFormat { formatOption ?? output.flatMap(ReportFormat.init(extensionOf:)) ?? .table }
    @Flag(name: .long, help: "No progress on stderr.") var quiet = false
    @Flag(name: .long, help: "Table: every column (p99, error codes) on one row per source, wider than 80 columns.")
    var wide = false
    @Option(
        name: .customLong("progress"),
        help: "Progress style: auto (one line per phase redrawn in place on a terminal, plain otherwise) or plain.")
    var progressStyle: ProgressStyle = .auto
    @Option(
        name: .customLong("progress-interval"), parsing: .unconditional,
        help: "Plain progress: at most one line per running phase every this many seconds (a line per phase's end).")
    var progressInterval: Double = 10
    @Option(
        name: .long,
        help: ArgumentHelp(
            "Compare arms on the same traffic instead: two or more of static, optimized, waterfall, auction (e.g. "
                + "static,optimized). --requests is per arm; table or json.")
    )
    var arms: String?
    @Option(
        name: .customLong("fail-under-fill"), parsing: .unconditional,
        help: "Exit 1 (after the report) when a placement's waterfall fill is under this percentage (0-100).")
    var failUnderFill: Double?
    @Option(
        name: .customLong("max-error-rate"), parsing: .unconditional,
        help: "Exit 1 (after the report) when a source's errors are over this percentage (0-100) of its requests.")
    var maxErrorRate: Double?
    @Option(
        name: .long, parsing: .unconditional,
        help: ArgumentHelp(
            "Seed for the in-process sandbox's draws (fill, prices, latency, faults) and every self-ordering "
                + "placement's optimizer: with --concurrency 1, the same seed gives the same fills."))
    var seed: UInt64?
    @Option(
        name: .long,
        help: ArgumentHelp(
            "A previous run's --format json output: the table and the HTML summary say what changed since (fill, "
                + "revenue per 1000 requests, p95 per placement)."))
    var baseline: String?

    func validate() throws {
        for (name, value) in [("--fail-under-fill", failUnderFill), ("--max-error-rate", maxErrorRate)] {
            if let value, !(value.isFinite && (0...100).contains(value)) {
                throw ValidationError("\(name): a percentage in 0…100, got \(value)")
            }
            if value != nil, arms != nil { throw ValidationError("\(name) does not apply to --arms") }
        }
        if baseline != nil, arms != nil { throw ValidationError("--baseline does not apply to --arms") }
        guard requests > 0 else { throw ValidationError("--requests must be positive, got \(requests)") }
        if let arms {
            do { _ = try Arm.parse(arms) } catch { throw ValidationError(error.message) }
            guard format == .table || format == .json else {
                throw ValidationError("--arms reports as table or json, not \(format.rawValue)")
            }
        }
        guard concurrency > 0 else { throw ValidationError("--concurrency must be positive, got \(concurrency)") }
        guard progressInterval.isFinite, progressInterval > 0, progressInterval <= 86_400 else {
            throw ValidationError("--progress-interval: seconds in (0, 86400], got \(progressInterval)")
        }
        if let output, let problem = OutputPath.problem(output, option: "--output") {
            throw ValidationError(problem)
        }
    }

    /// What a compare run gave: the arms' table, or the placements' reports (printed after the environment is
    /// closed).
    enum Ran: Sendable {
        case arms(String)
        case mediated(reports: [PlacementReport], run: RunInfo, planned: Int, interruption: Interruption)
    }

    func run() async throws {
        let progress = Progress.forStderr(
            enabled: !quiet, plain: progressStyle == .plain, interval: .milliseconds(Int(progressInterval * 1000)))
        // Read before the run: a wrong file fails at once, not after it.
        let before = try baseline.map { path throws(AdError) in try Baseline.read(path: path) }
        let arms = self.arms
        let placement = self.placement
        // Every placement's arms checked once, before any request (not one by one as the run reaches each).
        let checks: @Sendable (CLIConfiguration) -> [String] = { configuration in
            guard let arms, let parsed = try? Arm.parse(arms) else { return [] }
            let all = configuration.mediation.placements.keys.sorted()
            return (placement.isEmpty ? all : placement).flatMap { id -> [String] in
                guard let configured = configuration.mediation.placements[id] else { return [] }
                return parsed.compactMap { arm -> String? in
                    do throws(AdError) {
                        _ = try arm.apply(to: configured, id: id)
                        return nil
                    } catch { return error.message }
                }
            }
        }
        let ran = try await Environment.with(
            options, demo: demoOptions, progress: progress, seed: seed, checks: checks
        ) { env -> Ran in
            let all = env.configuration.mediation.placements.keys.sorted()
            for id in placement where !all.contains(id) {
                throw AdError(
                    .configuration,
                    "--placement: unknown placement \"\(id)\" (configured: \(all.joined(separator: ", ")))")
            }
            let chosen = placement.isEmpty ? all : placement
            if let arms {
                let parsed = try Arm.parse(arms)
                progress.say(
                    "compare: \(chosen.count) placement(s), arms \(arms), \(requests) requests per arm, concurrency "
                        + "\(concurrency)"
                )
                let runner = ArmsRunner(
                    configuration: env.configuration, networks: env.networks, requests: requests,
                    concurrency: concurrency,
                    progress: progress, privacy: privacy.signals)
                var results: [(placement: String, arms: [(arm: Arm, tally: Tally)])] = []
                for id in chosen {
                    results.append((id, try await runner.run(placement: id, arms: parsed)))
                }
                return .arms(ArmsRunner.render(results, json: format == .json))
            }
            progress.say("compare: \(chosen.count) placement(s), \(requests) requests each, concurrency \(concurrency)")
            // Ctrl-C stops starting requests; what ran is reported (marked partial) and written, then exit 130.
            // On a terminal the newline ends the live progress line; written as is (`warn` would escape it into
            // `\u{0A}`).
            let live = progress.enabled && progress.live
            let interruption = Interruption {
                if live { FileHandle.standardError.write(Data("\n".utf8)) }
                warn(
                    "interrupted: finishing the requests in flight, then reporting what ran (Ctrl-C again to quit now)")
            }
            var runner = CompareRunner(
                configuration: env.configuration, networks: env.networks, mediator: env.mediator,
                requests: requests, concurrency: concurrency, progress: progress, interruption: interruption,
                privacy: privacy.signals)
            // `--requests` comes from outside: a product past Int.max is clamped, not a crash.
            let product = runner.phaseCount(placements: chosen).multipliedReportingOverflow(by: requests)
            let planned = product.overflow ? Int.max : product.partialValue
            runner.runProgress = RunProgress(planned: planned)
            var runInfo = RunInfo(
                date: Date(), requests: requests, concurrency: concurrency,
                against: options.config ?? "the built-in demo (\(demoOptions.demo.rawValue))", seed: seed,
                placements: chosen, baseline: baseline, privacy: privacy.given)
            let started = ContinuousClock.now
            let reports = await runner.run(placements: chosen)
            runInfo.duration = (ContinuousClock.now - started).milliseconds / 1000
            return .mediated(reports: reports, run: runInfo, planned: planned, interruption: interruption)
        }
        guard case .mediated(let reports, let runInfo, let planned, let interruption) = ran else {
            if case .arms(let text) = ran { try emit(text, progress: progress) }
            return
        }
        if interruption.isRequested {
            let partial = PartialRun(
                done: reports.reduce(0) { $0 + $1.mediated.requests + $1.lines.reduce(0) { $0 + $1.tally.requests } },
                planned: planned)
            let text = Reports.render(
                reports, as: format, partial: partial, wide: wide, run: runInfo, baseline: before)
            try emit(text, progress: progress)
            warn(partial.text)
            throw ExitCode(130)
        }
        try emit(Reports.render(reports, as: format, wide: wide, run: runInfo, baseline: before), progress: progress)
        try Self.checkFailures(reports, concurrency: concurrency)
        let failed = Self.thresholdFailures(reports, failUnderFill: failUnderFill, maxErrorRate: maxErrorRate)
        for line in failed { warn(line) }
        if !failed.isEmpty { throw ExitCode(1) }
    }

    /// One line per threshold a completed run failed: a placement's waterfall fill under `failUnderFill` %, a
    /// source (the waterfall or a line's network alone) with errors over `maxErrorRate` % of its requests.
    static func thresholdFailures(
        _ reports: [PlacementReport], failUnderFill: Double?, maxErrorRate: Double?
    ) -> [String] {
        var failures: [String] = []
        for report in reports {
            if let failUnderFill, report.mediated.requests > 0, report.mediated.fillRate * 100 < failUnderFill {
                failures.append(
                    "threshold failed: \(report.id): waterfall fill "
                        + String(
                            format: "%.1f %% is under --fail-under-fill %g %%", report.mediated.fillRate * 100,
                            failUnderFill))
            }
            guard let maxErrorRate else { continue }
            let sources =
                [("waterfall", report.mediated)] + report.lines.map { ("\($0.network)/\($0.placement)", $0.tally) }
            for (label, tally) in sources where tally.requests > 0 {
                let rate = Double(tally.failures) / Double(tally.requests) * 100
                if rate > maxErrorRate {
                    failures.append(
                        "threshold failed: \(report.id): \(label) errors "
                            + String(format: "%.1f %% are over --max-error-rate %g %%", rate, maxErrorRate))
                }
            }
        }
        return failures.map { TerminalText.escaped($0) }
    }

    /// Warns on stderr (even with `--quiet`) about every source whose requests all failed; when every request of
    /// the run failed, says so and exits 3: a run where nothing answered is not a 0 % fill result.
    static func checkFailures(_ reports: [PlacementReport], concurrency: Int) throws {
        var total = 0
        var failed = 0
        var codes: [String: Int] = [:]
        for report in reports {
            let sources =
                [("\(report.id) (waterfall)", report.mediated)]
                + report.lines.map { ("\(report.id) → \($0.network)/\($0.placement)", $0.tally) }
            for (label, tally) in sources {
                // A request the privacy rules blocked was not sent: it neither failed nor answered.
                let errors = tally.failures
                total += tally.requests - (tally.errors[AdError.Code.privacyBlocked.name] ?? 0)
                failed += errors
                for (code, count) in tally.errors where code != AdError.Code.privacyBlocked.name {
                    codes[code, default: 0] += count
                }
                if tally.requests > 0, errors == tally.requests {
                    warn("warning: \(label): every request failed (\(Reports.errorsText(tally.errors)))")
                }
                for (reason, count) in tally.blockReasons.sorted(by: { $0.key < $1.key }) {
                    warn("note: \(label): \(count) of \(tally.requests) requests not sent: privacy_blocked: \(reason)")
                }
            }
        }
        guard total > 0, failed == total else { return }
        let cause = likelyCause(codes, concurrency)
        warn("error: every request failed (\(Reports.errorsText(codes))): nothing answered; \(cause)")
        throw ExitCode(3)
    }

    /// The likely cause of a run where every request failed, from the evidence (the error codes and the run's
    /// concurrency), so a slow server, a bad configuration and a run that overloads this machine are not given the
    /// same hint. Overload: at least 90 % of the errors are timeouts and `concurrency` is over 4 per core of
    /// `cores` (this machine's, unless a test gives its own).
    static func likelyCause(
        _ codes: [String: Int], _ concurrency: Int, cores: Int = ProcessInfo.processInfo.activeProcessorCount
    ) -> String {
        let total = codes.values.reduce(0, +)
        let dominant = codes.max { $0.value < $1.value }?.key ?? ""
        let timeouts = codes[AdError.Code.timeout.name, default: 0]
        let cores = max(1, cores)
        if total > 0, timeouts * 10 >= total * 9 {
            return concurrency > 4 * cores
                ? "every request timed out at --concurrency \(concurrency) on \(cores) cores: the run likely overloads "
                    + "this machine; lower --concurrency"
                : "every request timed out: the servers answer too slowly for the lines' timeout_ms, or not at all"
        }
        if dominant.hasPrefix("server_") {
            return "the servers answered with errors (\(dominant)); look at their logs (breakers then refuse requests)"
        }
        switch dominant {
        case AdError.Code.breakerOpen.name:
            return "the lines' circuit breakers opened after earlier failures; look at the first errors of the run"
        case AdError.Code.unauthorized.name, AdError.Code.forbidden.name:
            return "the servers refused the credentials: check the networks' keys and ids in the configuration"
        case AdError.Code.configuration.name:
            return "the configuration is at fault: see the errors above"
        case AdError.Code.invalidResponse.name:
            return "the servers' answers could not be read: is each base_url the network's API?"
        default:
            return "check that the server at each network's base_url is running"
        }
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

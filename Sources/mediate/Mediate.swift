import AdMediation
import AdMediationServices
import AdNetworkConformance
import AdStorage
import ArgumentParser
import CurlTransport
import DemandSandbox
import Foundation
import GrowthCatAds
import Logging
import MediateKit
import ServiceLifecycle
import Tracing

/// `mediate`: compare fill across adapters, debug one request, run the sandbox and the conformance kit.
/// Exit codes: 0 success, 1 a failed check, 2 bad usage or configuration, 3 every request failed, 130 interrupted
/// (after reporting what ran).
@main
struct Mediate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mediate",
        abstract: "Compare fill across ad networks, debug a request, run the demand sandbox and the conformance kit.",
        discussion: """
            Exit codes: 0 success · 1 a failed check (a conformance scenario, show, a compare threshold: \
            --fail-under-fill, --max-error-rate) · 2 bad usage or configuration \
            · 3 every request of a compare failed (nothing answered) · 130 interrupted by Ctrl-C, after printing and \
            writing what ran, marked partial.

            Examples:
              # every adapter against the built-in demo
              mediate compare
              mediate compare --config my.json --format html --output r.html
              # one request with its full trace
              mediate load --placement home_tile
              mediate sandbox --demo standard --write-config demo.json
              mediate conformance --network mars
              # what the privacy rules decide for each network under these signals
              mediate consent --gdpr 1 --tcf CPXxRfAPXxRfAAfKABENB
              # the configured placements and networks (secrets hidden)
              mediate list --config my.json
            """,
        version: MediateVersion.current,
        subcommands: [
            Compare.self, Load.self, Show.self, ListCommand.self, SandboxCommand.self, Conformance.self,
            ConsentCommand.self,
        ],
        defaultSubcommand: Compare.self)

    static func main() async {
        do {
            let arguments = Array(CommandLine.arguments.dropFirst())
            if let unknown = unknownCommand(arguments) { throw ValidationError(unknown) }
            var command = try parseAsRoot(arguments)
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch let error as AdError {
            // Messages carry text from outside (paths, names, server answers): escaped, so they cannot drive the
            // terminal.
            FileHandle.standardError.write(Data("error: \(TerminalText.escaped(error.message))\n".utf8))
            Foundation.exit(error.code == .configuration || error.code == .unsupported ? 2 : 1)
        } catch {
            let code = exitCode(for: error)
            if code == .success { exit(withError: error) }  // --help, --version
            // Each line escaped (argument parser's messages span lines; an argument may hold control characters).
            // One prefix for every error: argument parser's own messages start "Error: ".
            let message = fullMessage(for: error).split(separator: "\n", omittingEmptySubsequences: false)
                .map { line in
                    TerminalText.escaped(line.hasPrefix("Error: ") ? "error: " + line.dropFirst(7) : String(line))
                }.joined(separator: "\n")
            if !message.isEmpty { FileHandle.standardError.write(Data((message + "\n").utf8)) }
            Foundation.exit(code == .validationFailure ? 2 : code.rawValue)
        }
    }

    /// A first argument that is neither an option nor a command, but within two edits of a command (`compre`): the
    /// message names the command meant. Nil otherwise (argument parser reports the rest).
    static func unknownCommand(_ arguments: [String]) -> String? {
        guard let first = arguments.first, !first.hasPrefix("-") else { return nil }
        let names = configuration.subcommands.compactMap { $0.configuration.commandName ?? $0._commandName }
        guard !names.contains(first) else { return nil }
        let scored = names.map { ($0, editDistance(first, $0)) }.filter { $0.1 <= 2 }.min { $0.1 < $1.1 }
        guard let (nearest, _) = scored else { return nil }
        return "unknown command \"\(first)\" (did you mean \"\(nearest)\"?); commands: \(names.joined(separator: ", "))"
    }

    /// Levenshtein distance between two short strings.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        guard !a.isEmpty else { return b.count }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in stride(from: 1, through: b.count, by: 1) {
                let substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)
                current[j] = min(previous[j] + 1, current[j - 1] + 1, substitution)
            }
            previous = current
        }
        return previous[b.count]
    }
}

/// `--demo`: the built-in demos.
enum DemoName: String, CaseIterable, Sendable, ExpressibleByArgument {
    /// Every adapter of this build against the sandbox.
    case standard
    /// A drifting waterfall (`drift_banner`) and an auction (`auction_banner`), for `compare --arms`.
    case arms
}

/// Options shared by the commands that read a configuration.
struct ConfigOptions: ParsableArguments {
    @Option(
        name: .long,
        help: "Configuration file (JSON). Without it, the demand sandbox starts in-process with the demo configuration."
    )
    var config: String?
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

/// The demo to run and the learned state to keep: for the commands that mediate (`compare`, `load`, `show`), not
/// `conformance`, where they mean nothing.
struct DemoOptions: ParsableArguments {
    @Option(
        name: .customLong("demo"),
        help: ArgumentHelp(
            "Without --config, the built-in demo: standard (every adapter; the default) or arms (drift and an "
                + "auction, for --arms). Refused with --config."))
    var demoOption: DemoName?

    /// `--demo`, `standard` when not given.
    var demo: DemoName { demoOption ?? .standard }
    @Option(
        name: .customLong("optimizer-state"),
        help: "SQLite file where self-ordering placements keep what they learned: restored at start, saved at the end.")
    var optimizerState: String?
}

/// A loaded configuration with its networks, mediator, HTTP client and (for the demo) sandbox.
struct Environment {
    let configuration: CLIConfiguration
    /// The configured networks behind the privacy gate (``CLIConfiguration/gated(_:signals:)``): a command that asks
    /// a network alone asks it through these, never the adapter itself, so the rules apply on every path.
    let networks: [String: any AdNetwork]
    let mediator: Mediator
    let http: CurlHTTPClient
    let sandbox: RunningSandbox?
    /// With `recordBodies`, what the networks sent and got (`load --bodies`).
    var bodies: BodyRecorder? = nil
    /// The string values of the networks' settings (keys, signatures, ids): what `--bodies` redacts.
    var secrets: [String] = []

    /// Runs `body` with a loaded environment: without `--config`, inside the demo's sandbox scope; the HTTP client and
    /// every network that works in the background run as services of one `ServiceGroup` for the scope
    /// (``withServices(_:logger:_:)``), which shuts them down gracefully whichever way `body` ends — the networks
    /// first (a bidder's last notices and a GrowthCat flush in progress still go out), then the client. `scenario`:
    /// without `--config`, the sandbox serves it instead of the demo's (the demo configuration still points at it).
    /// `seed` (`--seed`): the in-process sandbox's seed and every self-ordering placement's optimizer seed.
    /// `checks`: the command's own up-front checks of the configuration (its options against the file), listed with
    /// the file's own ``CLIConfiguration/problems`` before anything starts.
    static func with<T: Sendable>(
        _ options: ConfigOptions, demo: DemoOptions? = nil, progress: Progress, tracer: (any Tracer)? = nil,
        scenario: SandboxScenario? = nil, seed: UInt64? = nil, recordBodies: Bool = false,
        checks: @Sendable (CLIConfiguration) -> [String] = { _ in [] }, _ body: (Environment) async throws -> T
    ) async throws -> T {
        options.bootstrapLogging()
        if options.config != nil, demo?.demoOption != nil {
            throw AdError(
                .configuration, "--demo runs a built-in demo instead of a file: it does not apply with --config")
        }
        if let path = options.config {
            let data = try CLIConfiguration.read(path: path)  // at most 1 MiB + 1 byte, whatever the file's size
            return try await with(
                data, sandbox: nil, demo: demo, tracer: tracer, seed: seed, recordBodies: recordBodies, checks: checks,
                body)
        }
        let arms = demo?.demo == .arms
        var served = scenario ?? (arms ? Demo.armsScenario : Demo.scenario)
        if let seed { served.seed = seed }
        return try await DemandSandbox.withSandbox(scenario: served) { sandbox in
            progress.say("demo\(arms ? " (arms)" : ""): demand sandbox on \(sandbox.rootURL)")
            let data = arms ? Demo.armsConfiguration(sandbox) : Demo.configuration(sandbox)
            return try await with(
                data, sandbox: sandbox, demo: demo, tracer: tracer, seed: seed, recordBodies: recordBodies,
                checks: checks, body)
        }
    }

    /// Builds the environment from a configuration file's bytes (nothing starts while it is built) and runs `body`
    /// with its services running.
    private static func with<T: Sendable>(
        _ data: Data, sandbox: RunningSandbox?, demo: DemoOptions?, tracer: (any Tracer)?, seed: UInt64?,
        recordBodies: Bool, checks: @Sendable (CLIConfiguration) -> [String], _ body: (Environment) async throws -> T
    ) async throws -> T {
        var configuration: CLIConfiguration
        do throws(ConfigurationProblems) {
            configuration = try CLIConfiguration.check(data) { $0.problems + checks($0) }
        } catch {
            // Every problem the file's reading found, at once (the first 20): a user fixes them in one pass.
            try refuse(error.messages, total: error.total)
            throw error.error
        }
        if let seed {
            for (id, placement) in configuration.mediation.placements where placement.optimizer != nil {
                configuration.mediation.placements[id]?.optimizer?.seed = seed
            }
        }
        let http = CurlHTTPClient(tracer: tracer)
        // The adapters themselves stay here: the mediator gates its own lines, every other path the gated networks.
        let recorder = recordBodies ? BodyRecorder(http) : nil
        let built = try configuration.makeNetworks(http: recorder ?? http)
        let adapters = built.mapValues(\.network)
        let mediator = try Mediator(
            networks: Array(adapters.values), configuration: configuration.mediation, tracer: tracer,
            privacy: configuration.privacy)
        let services: [any Service] = [BackgroundWorkService(http)] + CLIConfiguration.services(of: built)
        return try await withServices(services) {
            var store: SQLiteStateStore?
            if let path = demo?.optimizerState {
                do {
                    let opened = try SQLiteStateStore(path: path)
                    try await mediator.restoreOptimizerState(from: opened)
                    store = opened
                } catch {
                    throw AdError(.configuration, "--optimizer-state: \(path): \(error)")
                }
            }
            let env = Environment(
                configuration: configuration, networks: configuration.gated(adapters), mediator: mediator, http: http,
                sandbox: sandbox, bodies: recorder, secrets: Redaction.settingValues(data))
            return try await withCleanup {
                try await body(env)
            } finally: {
                await env.save(to: store)
            }
        }
    }

    /// Prints every problem (`error: …`, one line each) and exits 2 when there is any: a configuration is checked
    /// once, up front, and all its problems are listed together, not one per run. `total`: how many were found, when
    /// `problems` holds only the first of them.
    static func refuse(_ problems: [String], total: Int? = nil) throws {
        guard !problems.isEmpty else { return }
        for problem in problems { warn("error: " + problem) }
        let total = max(total ?? problems.count, problems.count)
        if total > problems.count {
            warn("error: \(total) problems in the configuration (the first \(problems.count) shown); nothing was sent")
        } else if total > 1 {
            warn("error: \(total) problems in the configuration; nothing was sent")
        }
        throw ExitCode(2)
    }

    /// Saves what the self-ordering placements learned (with `--optimizer-state`).
    private func save(to store: SQLiteStateStore?) async {
        guard let store else { return }
        do { try await mediator.saveOptimizerState(to: store) } catch {
            FileHandle.standardError.write(Data("warning: --optimizer-state: \(error)\n".utf8))
        }
    }
}

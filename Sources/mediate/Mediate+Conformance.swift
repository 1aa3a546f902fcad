import AdMediation
import AdMediationTesting
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

struct Conformance: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the conformance kit against a configured network; one line per scenario; exit 1 if any fails.",
        discussion: """
            Against a demand sandbox (the demo's, or `mediate sandbox` behind --config), the command sets what \
            each scenario needs through the sandbox's admin API (fill, no fill, a 500, a slow answer) and puts \
            the sandbox's scenario back; against another server it says so and skips what it cannot provoke.

            Examples:
              # against the built-in demo's sandbox
              mediate conformance --network mars
              mediate conformance --config my.json --network cb --placement main_banner
              # as the app would ask it under these signals (a network the privacy rules block is never called)
              mediate conformance --network cb --gdpr 1 --tcf CPXxRfAPXxRfAAfKABENB
            """)

    @OptionGroup var options: ConfigOptions
    @OptionGroup(
        title: "Privacy signals (with any of them, every request of the kit carries them, over the kit's own)")
    var privacy: PrivacyOptions
    @Option(name: .long, help: "The network to check.") var network: String
    @Option(
        name: .long,
        help: ArgumentHelp(
            "The mediated placement whose line or bidder for this network gives the fill request (default: the first "
                + "that uses it).")
    ) var placement: String?

    /// The privacy fields each network type's request carries; a type not listed carries TCF, US privacy and GPP.
    /// MARS's ad request has only a GPP string (`consent.gpp`).
    static let privacyFields: [String: Set<ConformanceSubject.PrivacyField>] = ["mars": [.gpp]]

    /// Without `--config`, the sandbox the demo configuration points at fills every request without faults: the
    /// demo's own fill is under 100 % and it injects faults, so the scenarios that need a fill would fail by chance.
    /// (No-fill, failure and slow requests stay skipped: the CLI has no request of that kind for every network.)
    static let demoScenario = SandboxScenario(seed: 2026)

    func run() async throws {
        let demo = options.config == nil
        let results = try await Environment.with(
            options, progress: Progress(enabled: false), scenario: demo ? Self.demoScenario : nil
        ) { env in
            guard let base = env.configuration.networks[network] else {
                throw AdError(.configuration, "--network: unknown network \"\(network)\"")
            }
            let candidates = env.configuration.mediation.placements.sorted { $0.key < $1.key }
                .filter { placement == nil || $0.key == placement }
                .compactMap { id, config -> (PlacementConfiguration, String)? in
                    (config.lines.first { $0.network == network }?.placement
                        ?? config.bidders.first { $0.network == network }?.placement)
                        .map { (config, $0) }
                }
            guard let (placementConfig, linePlacement) = candidates.first else {
                throw AdError(
                    .configuration, "--placement: no placement has a line or bidder for network \"\(network)\"")
            }
            let format = placementConfig.format
            // The kit watches the wire through a recording client wrapped around the real one.
            let recording = RecordingHTTPClient(wrapping: env.http)
            let single = CLIConfiguration(
                networks: [network: base], mediation: env.configuration.mediation,
                factories: env.configuration.factories)
            guard let adapter = try single.makeNetworks(http: recording)[network] else {
                throw ExitCode(2)
            }
            // The kit asks the network through the privacy gate, as every other path does; the CLI's signals, when
            // given, win over the kit's own.
            let signals = privacy.isSet ? privacy.signals : nil
            guard let gated = single.gated([network: adapter.network], signals: signals)[network] else {
                throw ExitCode(2)
            }
            let subject = ConformanceSubject(
                network: gated, wire: recording, fillRequest: AdRequest(placement: linePlacement, format: format),
                privacyFields: Self.privacyFields[base.type] ?? Set(ConformanceSubject.PrivacyField.allCases))

            // A demand sandbox is driven through its admin API, so each scenario gets the answers it needs.
            var sandbox: ConformanceSandbox?
            switch await ConformanceSandbox.connect(baseURL: base.baseURL, http: env.http) {
            case .success(let connected): sandbox = connected
            case .failure(let why):
                warn(
                    TerminalText.escaped(
                        "conformance: \(network) is not served by a demand sandbox (\(why.message)): the scenarios "
                            + "that need a fill rely on the server filling; no fill, a failure and a slow answer "
                            + "cannot be provoked, so their scenarios are skipped"))
            }
            var results: [ConformanceResult] = []
            do {
                // The adapter under test runs as a service for its scenarios (its last events go out at the end).
                results = try await withServices(CLIConfiguration.services(of: [network: adapter])) {
                    try await sandbox?.set(placement: linePlacement) { _ in }
                    var results = await AdNetworkConformance.runAll(subject)
                    if let sandbox {
                        results = try await Self.provoked(
                            results, subject: subject, sandbox: sandbox, placement: linePlacement)
                        try await sandbox.set(placement: linePlacement) { _ in }
                    }
                    return results
                }
                if placementConfig.bidders.contains(where: { $0.network == network }) {
                    // A network used as a bidder also runs the bidder scenarios, on a clock the kit moves (expiry
                    // without waiting).
                    let clock = ManualAdClock()
                    if let bidder = try single.makeNetworks(http: recording, clock: clock)[network],
                        let gatedBidder = single.gated([network: bidder.network], signals: signals)[network]
                    {
                        let request = AdRequest(placement: linePlacement, format: format, timeout: .seconds(2))
                        results += try await withServices(
                            CLIConfiguration.services(of: [network: bidder])
                        ) {
                            await BidderConformance.runAll(
                                BidderSubject(network: gatedBidder, wire: recording, bidRequest: request, clock: clock))
                        }
                    }
                }
                try await sandbox?.restore()
            } catch {
                try? await sandbox?.restore()
                throw error
            }
            return results
        }
        var (passed, skipped, failed) = (0, 0, 0)
        for result in results {
            // Observations quote the server's answers: escaped.
            switch result.status {
            case .passed:
                passed += 1
                print("PASS  \(result.scenario)")
            case .skipped(let why):
                skipped += 1
                print("SKIP  \(result.scenario): \(TerminalText.escaped(why))")
            case .failed(let failure):
                failed += 1
                print(
                    TerminalText.escaped(
                        "FAIL  \(result.scenario): expected \(failure.expectation); observed \(failure.observed)"))
            }
        }
        print("\(passed) passed, \(skipped) skipped, \(failed) failed")
        if failed > 0 { throw ExitCode(1) }
    }

    /// The scenarios the subject alone skips, run against the sandbox set up for each: no fill (fill rate 0), a
    /// failure (every answer a 500, expected as `server_500`), a slow answer (1.5 s, for cancellation and timeouts).
    /// Their results replace the skips in `results`.
    static func provoked(
        _ results: [ConformanceResult], subject: ConformanceSubject, sandbox: ConformanceSandbox, placement: String
    ) async throws -> [ConformanceResult] {
        var subject = subject
        subject.noFillRequest = subject.fillRequest
        subject.failingRequest = (subject.fillRequest, .server(status: ConformanceSandbox.failingStatus))
        subject.slowRequest = subject.fillRequest
        // Each phase: how the sandbox is set, the answer a probe load must then get (nil: no probe; the slow phase
        // would cost its 1.5 s twice), and the scenarios it serves. A sandbox may not obey: Google's app-open test ad
        // unit always fills, whatever the scenario. A probe that gets another answer skips the phase's scenarios.
        let phases: [(change: @Sendable (inout NetworkScenario) -> Void, expect: String?, names: [String])] = [
            ({ $0.fillRate = 0 }, "no fill", ["noFillIsAValue"]),
            (
                { $0.faults = [Fault(.status, status: ConformanceSandbox.failingStatus)] }, "an error",
                ["errorsMapToTheTaxonomy"]
            ),
            (
                { $0.latencyMs = .fixed(ConformanceSandbox.slowLatencyMs) }, nil,
                ["cancellationIsHonouredPromptly", "timeoutsAreHonoured"]
            ),
        ]
        var results = results
        for (change, expect, names) in phases {
            try await sandbox.set(placement: placement, change)
            var skip: String?
            if let expect {
                let got = await probe(subject)
                if got != expect {
                    skip =
                        "the sandbox was set to answer \(placement) with \(expect) but a probe got \(got) (it answers "
                        + "this placement its own way, e.g. a test ad unit that always fills)"
                }
            }
            for name in names {
                guard let scenario = AdNetworkConformance.scenarios.first(where: { $0.name == name }),
                    let index = results.firstIndex(where: { $0.scenario == name })
                else { continue }
                if let skip {
                    results[index].status = .skipped(skip)
                    continue
                }
                let status: ConformanceResult.Status
                do {
                    try await scenario.run(subject)
                    status = .passed
                } catch let failure as ConformanceFailure {
                    status = .failed(failure)
                } catch {
                    status = .failed(
                        ConformanceFailure(scenario: name, expectation: "no unexpected error", observed: "\(error)"))
                }
                results[index].status = status
            }
        }
        return results
    }

    /// One load of the subject's fill request: `a fill`, `no fill` or `an error`.
    static func probe(_ subject: ConformanceSubject) async -> String {
        do {
            let result = try await subject.network.load(subject.fillRequest)
            guard let ad = result.ad else { return "no fill" }
            ad.invalidate()
            return "a fill"
        } catch {
            return "an error"
        }
    }
}

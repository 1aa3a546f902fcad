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
            Examples:
              # against the built-in demo's sandbox
              mediate conformance --network mars
              mediate conformance --config my.json --network cb --placement main_banner
            """)

    @OptionGroup var options: ConfigOptions
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
        let env = try await Environment.load(
            options, progress: Progress(enabled: false), scenario: demo ? Self.demoScenario : nil)
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
        guard let (placementConfig, linePlacement) = candidates.first else {
            await env.close()
            throw AdError(.configuration, "--placement: no placement has a line or bidder for network \"\(network)\"")
        }
        let format = placementConfig.format
        // The kit watches the wire through a recording client wrapped around the real one.
        let recording = RecordingHTTPClient(wrapping: env.http)
        let single = CLIConfiguration(
            networks: [network: base], mediation: env.configuration.mediation, factories: env.configuration.factories)
        guard let adapter = try single.makeNetworks(http: recording)[network] else {
            await env.close()
            throw ExitCode(2)
        }
        let subject = ConformanceSubject(
            network: adapter, wire: recording, fillRequest: AdRequest(placement: linePlacement, format: format),
            privacyFields: Self.privacyFields[base.type] ?? Set(ConformanceSubject.PrivacyField.allCases))

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
}

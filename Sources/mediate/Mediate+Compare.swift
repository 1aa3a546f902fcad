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

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

struct SandboxCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sandbox", abstract: "Run the demand sandbox in the foreground and print its base URLs.",
        discussion: """
            Examples:
              # then: mediate compare --config demo.json
              mediate sandbox --demo standard --port 8082 --write-config demo.json
              # the demo with bidders, for compare --arms
              mediate sandbox --demo arms --write-config arms.json
              mediate sandbox --scenario my-scenario.json
            """)

    @Option(name: .long, help: "Scenario file (JSON).") var scenario: String?
    @Option(
        name: .long,
        help: ArgumentHelp(
            "Serve a built-in demo's scenario (what `mediate compare --demo NAME` without --config runs): standard "
                + "or arms (drift and an auction with two bidders)."))
    var demo: DemoName?
    @Option(name: .long, help: "Write the demo's configuration, pointing at this sandbox, to this file (for --config).")
    var writeConfig: String?
    @Option(name: .long, parsing: .unconditional, help: "Port (0 = any free port).") var port: Int = 0

    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port must be 0…65535, got \(port)") }
        if demo != nil && scenario != nil { throw ValidationError("--demo and --scenario cannot be combined") }
    }

    func run() async throws {
        var loaded =
            switch demo {
            case .standard?: Demo.scenario
            case .arms?: Demo.armsScenario
            case nil: SandboxScenario()
            }
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
        let sandbox: RunningSandbox
        do { sandbox = try await DemandSandbox.start(scenario: loaded, configuration: configuration) } catch {
            // The listener's error names library internals (`bind(descriptor:ptr:bytes:)`, errno 98): said plainly.
            if "\(error)".contains("Address already in use") {
                throw AdError(
                    .configuration,
                    "--port \(port): the port is already in use on 127.0.0.1; choose another, or 0 for any free port")
            }
            throw error
        }
        print("growthcat  \(sandbox.growthcatBaseURL)")
        print("mars       \(sandbox.marsBaseURL)")
        print("chartboost \(sandbox.chartboostBaseURL)")
        print("appopen    \(sandbox.appOpenBaseURL)")
        if demo == .arms {
            print("rtb-a      \(sandbox.bidderBaseURL("rtb-a"))")
            print("rtb-b      \(sandbox.bidderBaseURL("rtb-b"))")
        }
        print("admin      \(sandbox.adminURL)")
        if let writeConfig {
            let written = demo == .arms ? Demo.armsConfiguration(sandbox) : Demo.configuration(sandbox)
            guard FileManager.default.createFile(atPath: writeConfig, contents: written) else {
                await sandbox.shutdown()
                throw AdError(.configuration, "--write-config: cannot write \(writeConfig)")
            }
            print("config     \(writeConfig)")
        }
        fflush(nil)
        while true { try await Task.sleep(for: .seconds(3600)) }
    }
}

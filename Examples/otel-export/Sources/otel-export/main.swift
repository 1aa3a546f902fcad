// Exports the mediation layer's traces, metrics and logs with swift-otel over OTLP/HTTP (JSON).
//
// With no argument, the example starts its own OTLP endpoint on loopback that appends every export it receives to
// `otel-export.jsonl` (one JSON export per line), so it runs with nothing else installed. Pass `--endpoint URL` to
// send to a real OpenTelemetry Collector instead (for example `http://127.0.0.1:4318`).
//
// What it does: starts the demand sandbox in-process, builds a mediator over MARS tiles and Chartboost banners on a
// CurlHTTPClient, bootstraps swift-otel (which becomes the backend of swift-log, swift-metrics and
// swift-distributed-tracing), runs 20 mediated requests, and shuts down — the observability service flushes on the
// way out.
import AdMediation
import AdMediationTesting
import ChartboostBanners
import CurlTransport
import DemandSandbox
import Foundation
import Logging
import MARSAds
import OTel
import ServiceLifecycle
import Synchronization

/// The local OTLP endpoint: appends each request's body to a file and counts the exports by path.
final class FileCollector: Sendable {
    /// The file and the counts, behind one lock (the server answers on its own threads).
    final class Sink: Sendable {
        private let state: Mutex<(file: FileHandle, exports: [String: Int])>

        init(file: FileHandle) { state = Mutex((file, [:])) }

        func record(_ request: LoopbackHTTPServer.Request) {
            state.withLock { state in
                state.file.write(Data(request.body) + Data("\n".utf8))
                state.exports[request.target, default: 0] += 1
            }
        }

        var exports: [String: Int] { state.withLock { $0.exports } }
    }

    let server: LoopbackHTTPServer
    let sink: Sink

    init(path: String) throws {
        FileManager.default.createFile(atPath: path, contents: nil)
        let sink = Sink(file: try FileHandle(forWritingTo: URL(fileURLWithPath: path)))
        self.sink = sink
        server = try LoopbackHTTPServer { request in
            sink.record(request)
            return .respond(.init(status: 200, headers: [("Content-Type", "application/json")], body: Array("{}".utf8)))
        }
    }
}

/// The app's work: 20 mediated requests, then return (which shuts the service group down gracefully).
struct MediationWork: Service {
    let mediator: Mediator

    func run() async throws {
        let logger = Logger(label: "otel-export")
        for round in 0..<10 {
            for placement in ["home_tile", "main_banner"] {
                var request = mediator.request(for: placement)  // in the format the configuration gives it
                request.testMode = true
                let outcome = await mediator.loadWithTrace(request)
                let winner = outcome.trace.winner.map { "\($0.network)/\($0.placement)" } ?? "none"
                logger.info(
                    "mediated", metadata: ["round": "\(round)", "placement": "\(placement)", "winner": "\(winner)"])
                if case .success(let result) = outcome.result { result.ad?.invalidate() }
            }
        }
    }
}

@main
enum OTelExport {
    static func main() async throws {
        let arguments = CommandLine.arguments
        let endpointArgument = arguments.firstIndex(of: "--endpoint").flatMap {
            arguments.indices.contains($0 + 1) ? arguments[$0 + 1] : nil
        }
        // Without --endpoint, a local collector writes what is exported to otel-export.jsonl.
        let collector = endpointArgument == nil ? try FileCollector(path: "otel-export.jsonl") : nil
        let endpoint = endpointArgument ?? collector?.server.baseURL ?? ""

        var config = OTel.Configuration.default
        config.serviceName = "admediation-otel-export"
        config.diagnosticLogLevel = .error
        config.traces.otlpExporter.protocol = .httpJSON
        config.traces.otlpExporter.endpoint = endpoint + "/v1/traces"
        config.metrics.otlpExporter.protocol = .httpJSON
        config.metrics.otlpExporter.endpoint = endpoint + "/v1/metrics"
        config.logs.otlpExporter.protocol = .httpJSON
        config.logs.otlpExporter.endpoint = endpoint + "/v1/logs"
        config.traces.batchSpanProcessor.scheduleDelay = .milliseconds(500)
        config.metrics.exportInterval = .seconds(1)
        let observability = try OTel.bootstrap(configuration: config)

        let sandbox = try await DemandSandbox.start()
        let http = CurlHTTPClient()  // traces through InstrumentationSystem.tracer, which OTel.bootstrap set
        let mars = MarsNetwork(
            client: MozAdsClientBuilder(httpClient: http).environment(.custom(baseURL: sandbox.marsBaseURL)).build())
        let chartboost = ChartboostNetwork(
            configuration: .init(
                baseURL: sandbox.chartboostBaseURL, appID: "cb_app_demo", appSignature: "cb_sig_demo_secret"),
            http: http)
        let mediator = try Mediator(
            networks: [mars, chartboost],
            configuration: .init(placements: [
                "home_tile": .init(
                    format: .tile, lines: [.init(network: "mars", placement: "mock_tile_1", ecpm: 0.8)],
                    abLabel: "tiles-a"),
                "main_banner": .init(
                    format: .banner(BannerSize(width: 320, height: 50)),
                    lines: [.init(network: "chartboost", placement: "Main Menu")]),
            ]))

        let group = ServiceGroup(
            configuration: .init(
                services: [
                    .init(service: observability),
                    .init(
                        service: MediationWork(mediator: mediator), successTerminationBehavior: .gracefullyShutdownGroup
                    ),
                ],
                logger: Logger(label: "service-group")))
        try await group.run()
        await http.shutdown()
        await sandbox.shutdown()
        if let collector {
            collector.server.stop()
            let received = collector.sink.exports
            print(
                "OTLP exports received: "
                    + "\(received.sorted { $0.key < $1.key }.map { "\($0.key) ×\($0.value)" }.joined(separator: ", "))"
            )
            print("written to otel-export.jsonl")
        } else {
            print("exported to \(endpoint)")
        }
    }
}

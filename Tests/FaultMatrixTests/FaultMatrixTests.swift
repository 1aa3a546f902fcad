import AdMediation
import AdMediationTesting
import AdNetworkConformance
import AdapterKit
import BuiltInNetworks
import CurlTransport
import DemandSandbox
import Foundation
import TestSupport
import Testing

/// One fault the sandbox can inject, by the name the matrix uses.
struct FaultCase: Sendable, CustomStringConvertible {
    var name: String
    var scenario: NetworkScenario
    var description: String { name }
    /// The fault is a slow answer: the line's timeout is what ends it.
    var isAboutTime: Bool { name == "timeout" || name == "slow_drip" }

    static func status(_ code: Int) -> FaultCase {
        FaultCase(
            name: code == 429 ? "429 + Retry-After" : "\(code)",
            scenario: NetworkScenario(faults: [Fault(.status, status: code, retryAfterS: 7)]))
    }
    static func kind(_ kind: Fault.Kind) -> FaultCase {
        FaultCase(name: kind.rawValue, scenario: NetworkScenario(faults: [Fault(kind)]))
    }

    static let all: [FaultCase] =
        [400, 401, 403, 404, 429, 500, 503].map(status) + [
            kind(.reset), kind(.truncated), kind(.malformedJSON), kind(.wrongShape), kind(.oversized), kind(.slowDrip),
            FaultCase(name: "timeout", scenario: NetworkScenario(latencyMs: .fixed(2000))),
        ]
}

/// One network of the registry of built-in networks that has a sample line, built from it over the sandbox: the
/// matrix has no table of its own of which networks there are or how each is built.
struct NetworkCase: Sendable, CustomStringConvertible {
    var entry: BuiltInNetwork
    var format: AdFormat
    var placement: String
    var name: String { entry.factory.type }
    var description: String { name }

    static let all: [NetworkCase] = BuiltInNetworks.samples.compactMap { entry in
        guard let format = entry.sampleFormat, let sample = entry.sample else { return nil }
        return NetworkCase(entry: entry, format: format, placement: sample.placement)
    }

    /// The sandbox's base URL for this network.
    func baseURL(_ sandbox: RunningSandbox) -> String { entry.sampleBaseURL(rootURL: sandbox.rootURL) }

    func make(_ sandbox: RunningSandbox, _ http: CurlHTTPClient, directory: URL) throws -> BuiltNetwork {
        try make(baseURL: baseURL(sandbox), http, directory: directory)
    }

    /// Built by its factory from its sample's settings, keeping its state (GrowthCat's event queue) in `directory`.
    func make(baseURL: String, _ http: CurlHTTPClient, directory: URL) throws -> BuiltNetwork {
        try entry.makeSample(
            id: name, baseURL: baseURL, context: AdNetworkFactoryContext(http: http, stateDirectory: directory))
    }
}

/// How the faulted line ended, as the matrix prints it: `error:<code>`, `no_fill`, `timeout`.
func matrixCell(_ outcome: LineOutcome) -> String {
    switch outcome {
    case .error(let error): "error:\(error.code.name)"
    default: outcome.name
    }
}

/// Chartboost-style and app-open share one contract for errors: every status maps onto the taxonomy.
let errorBodyContract: [String: String] = [
    "400": "error:bad_request", "401": "error:unauthorized", "403": "error:forbidden", "404": "error:server_404",
    "429 + Retry-After": "error:rate_limited", "500": "error:server_500", "503": "error:server_503",
    "reset": "error:network", "truncated": "error:network", "malformed_json": "error:invalid_response",
    "wrong_shape": "error:invalid_response", "oversized": "error:invalid_response", "slow_drip": "timeout",
    "timeout": "timeout",
]

/// The documented outcome of every (network, fault) pair: the faulted line's outcome in the trace. In every case
/// the line below it (a scripted fill) still gets its chance and wins. docs/RELIABILITY.md prints this table.
let expectedMatrix: [String: [String: String]] = [
    "growthcat": [
        "400": "error:server_400", "401": "error:unauthorized", "403": "error:server_403", "404": "no_fill",
        "429 + Retry-After": "error:rate_limited", "500": "error:server_500", "503": "error:server_503",
        "reset": "no_fill", "truncated": "no_fill", "malformed_json": "error:invalid_response",
        "wrong_shape": "error:invalid_response", "oversized": "error:invalid_response", "slow_drip": "timeout",
        "timeout": "timeout",
    ],
    "mars": [
        "400": "error:bad_request", "401": "error:unauthorized", "403": "error:forbidden", "404": "error:server_404",
        "429 + Retry-After": "error:rate_limited", "500": "error:server_500", "503": "error:server_503",
        "reset": "error:network", "truncated": "error:network", "malformed_json": "error:invalid_response",
        "wrong_shape": "no_fill", "oversized": "error:invalid_response", "slow_drip": "timeout", "timeout": "timeout",
    ],
    "chartboost": errorBodyContract,
    "appopen": errorBodyContract,
]

@Suite("Fault matrix: every network through the mediator under every sandbox fault", .timeLimit(.minutes(2)))
struct FaultMatrixTests {
    @Test func everyRegisteredSampleIsAMatrixRowWithADocumentedOutcome() {
        // A network added to the registry with a sample line joins the matrix, and needs its documented row.
        #expect(NetworkCase.all.count == BuiltInNetworks.all.filter { $0.sample != nil }.count)
        #expect(Set(NetworkCase.all.map(\.name)) == Set(expectedMatrix.keys))
        #expect(Set(NetworkCase.all.map(\.name)) == Set(unreachableMatrix.keys))
    }

    @Test(arguments: NetworkCase.all, FaultCase.all)
    func theFaultedLineEndsAsDocumentedAndTheNextLineStillFills(network: NetworkCase, fault: FaultCase) async throws {
        let sandbox = try await DemandSandbox.start(
            scenario: SandboxScenario(seed: 1, networks: [network.name: fault.scenario]))
        let http = CurlHTTPClient()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "fault-matrix-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let backup = ScriptedAdNetwork(id: "backup", formats: [network.format.kind], fallback: .fill(ecpm: 1))
        let built = try network.make(sandbox, http, directory: directory)
        let adapter = built.network
        let placement = PlacementConfiguration(
            format: network.format, mode: .sequential,
            // A hang guard for the line where the fault is not about time, so a busy machine cannot turn an error into
            // a timeout (GrowthCat's 5xx retries its bootstrap and its load: 20 s was not enough with the suite and
            // two CPU-bound processes beside it); 500 ms where it is (the sandbox waits 2 s, or drips 16 bytes every
            // 40 ms: a late timer only makes the timeout later). The backup line and the deadline are hang guards.
            lines: [
                WaterfallLine(
                    network: adapter.id, placement: network.placement,
                    timeout: fault.isAboutTime ? .milliseconds(500) : HangGuard.request),
                WaterfallLine(network: "backup", placement: "any", timeout: HangGuard.request),
            ],
            deadline: HangGuard.wait)
        let mediator = try Mediator(
            networks: [adapter, backup], configuration: MediationConfiguration(placements: ["p": placement]))

        let outcome = await mediator.loadWithTrace(AdRequest(placement: "p", format: network.format))

        let cell = try #require(outcome.trace.lines.first).outcome
        #expect(matrixCell(cell) == expectedMatrix[network.name]?[fault.name], "\(network) under \(fault): \(cell)")
        #expect(outcome.trace.winnerIndex == 1, "the next line got its chance and filled")
        #expect(try outcome.result.get().ad?.networkID == "backup")
        // Nothing leaks: every easy handle is freed once the transfers (including cancelled ones) are done.
        let deadline = ContinuousClock.now + .seconds(30)  // waited for: a hang guard, not a measure
        while http.statistics.liveHandles > 0 && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(http.statistics.liveHandles == 0 && http.statistics.activeTransfers == 0)
        await built.backgroundWork?.shutdown()
        await http.shutdown()
        await sandbox.shutdown()
    }
}

/// The rows the sandbox cannot inject, because the request never gets an HTTP answer: the URL is refused before
/// anything is sent (plain `http://` to a host that is not loopback) or the TLS handshake fails (an `https://` URL
/// to the sandbox, which speaks plain HTTP). Neither is "no fill" or "offline": a refused URL is the app's
/// configuration, a failed handshake a network error (GrowthCat, whose seed reads transport errors as "offline",
/// throws it as a configuration error so that it never starts the offline probe).
let unreachableMatrix: [String: [String: String]] = [
    "growthcat": ["insecure_url": "error:configuration", "tls": "error:configuration"],
    "mars": ["insecure_url": "error:configuration", "tls": "error:network"],
    "chartboost": ["insecure_url": "error:configuration", "tls": "error:network"],
    "appopen": ["insecure_url": "error:configuration", "tls": "error:network"],
]

@Suite("Fault matrix: URLs refused and TLS failures, for every network", .timeLimit(.minutes(1)))
struct UnreachableMatrixTests {
    @Test(arguments: NetworkCase.all, ["insecure_url", "tls"])
    func theLineEndsAsDocumentedAndTheNextLineStillFills(network: NetworkCase, fault: String) async throws {
        let sandbox = try await DemandSandbox.start(scenario: SandboxScenario(seed: 1))
        let http = CurlHTTPClient()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "unreachable-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let sandboxURL = network.baseURL(sandbox)
        let baseURL = fault == "tls" ? "https://" + sandboxURL.dropFirst("http://".count) : "http://ads.example.invalid"
        let built = try network.make(baseURL: baseURL, http, directory: directory)
        let adapter = built.network
        let backup = ScriptedAdNetwork(id: "backup", formats: [network.format.kind], fallback: .fill(ecpm: 1))
        let placement = PlacementConfiguration(
            format: network.format, mode: .sequential,
            lines: [
                WaterfallLine(network: adapter.id, placement: network.placement, timeout: .milliseconds(5000)),
                WaterfallLine(network: "backup", placement: "any", timeout: .milliseconds(500)),
            ],
            deadline: .milliseconds(12_000))
        let mediator = try Mediator(
            networks: [adapter, backup], configuration: MediationConfiguration(placements: ["p": placement]))

        let outcome = await mediator.loadWithTrace(AdRequest(placement: "p", format: network.format))

        let cell = try #require(outcome.trace.lines.first).outcome
        #expect(matrixCell(cell) == unreachableMatrix[network.name]?[fault], "\(network) under \(fault): \(cell)")
        #expect(try outcome.result.get().ad?.networkID == "backup", "the next line got its chance and filled")
        if fault == "insecure_url" {
            #expect(sandbox.records.requestCounts.isEmpty, "a refused URL sends nothing anywhere")
        }
        await built.backgroundWork?.shutdown()
        await http.shutdown()
        await sandbox.shutdown()
    }
}

import AdMediation
import AdNetworkConformance
import AdTransport
import CurlTransport
import DemandSandbox
import Foundation
import GrowthCatAds
import GrowthCatSandbox
import MediateKit
import Testing

@Suite("mediate configuration file under hostile input", .timeLimit(.minutes(2)))
struct ConfigurationFileTests {
    static let valid = """
        {"networks": {"m": {"type": "mars", "base_url": "https://mars.example/v1/", "cache_path": "PATH", \
        "cache_ttl_s": 300, "cache_max_mib": 10}},
         "placements": {"t": {"format": "tile", "lines": [{"network": "m", "placement": "tile_1"}]}}}
        """

    /// Parses and builds the networks (where the cache settings are read); the error message, or nil.
    func problem(_ data: Data) async -> String? {
        let http = CurlHTTPClient()
        var message: String?
        do {
            _ = try CLIConfiguration.parse(data).makeNetworks(http: http)
        } catch {
            message = error.message
        }
        await http.shutdown()
        return message
    }

    func valid() -> String {
        Self.valid.replacingOccurrences(
            of: "PATH",
            with: FileManager.default.temporaryDirectory.appendingPathComponent("cfg-\(UUID().uuidString).sqlite").path)
    }

    @Test(arguments: ["cache_ttl_s", "cache_max_mib"], HostileJSON.numeric)
    func aCacheSettingOutOfRangeIsAnErrorNamingTheField(field: String, value: HostileJSON.Value) async throws {
        let body = try #require(HostileJSON.replacing(["networks", "m", field], in: valid(), with: value))
        let message = await problem(body)
        switch value.name {
        case "wrong_type":
            #expect(message == nil, "a number written as a string is a valid setting (settings are strings or numbers)")
        case "boolean", "null":
            // Not a string or a number: refused when the file is read, naming what it is (a setting's value itself is
            // never printed: settings may be secrets).
            let found = value.name == "null" ? "null" : "a boolean"
            #expect(message == "networks.m.\(field): expected a string or a number, found \(found)", "\(value)")
        default:
            #expect(
                message?.hasPrefix("networks.m.\(field): must be a whole number") == true,
                "\(value): \(message ?? "accepted")")
        }
    }

    @Test func aValidFileBuildsItsNetworks() async {
        #expect(await problem(Data(valid().utf8)) == nil)
    }

    @Test func aFileNestedTooDeeplyIsRefusedNamingTheLimit() async {
        let body = Data(("{\"networks\": " + String(repeating: "[", count: 100_000)).utf8)
        #expect(await problem(body) == "configuration: nesting deeper than 16 levels")
    }
}

@Suite("mediate keeps GrowthCat's event queue across runs", .timeLimit(.minutes(1)))
struct DurableQueueTests {
    static func config(baseURL: String) -> Data {
        Data(
            """
            {"networks": {"gc": {"type": "growthcat", "base_url": "\(baseURL)", "api_key": "gc_test_demo"}},
             "placements": {"r": {"format": "rewarded", "lines": [{"network": "gc", "placement": "rewarded_coins"}]}}}
            """.utf8)
    }

    @Test func theDefaultQueueIsInThePerUserStateDirectory() throws {
        #expect(
            CLIConfiguration.stateDirectory(environment: ["XDG_STATE_HOME": "/x/state", "HOME": "/home/u"])?.path
                == "/x/state/mediate")
        #expect(
            CLIConfiguration.stateDirectory(environment: ["HOME": "/home/u"])?.path == "/home/u/.local/state/mediate")
        #expect(CLIConfiguration.stateDirectory(environment: [:]) == nil)
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("st-\(UUID().uuidString)").path
        let path = try CLIConfiguration.defaultQueuePath(networkID: "gc/1", environment: ["XDG_STATE_HOME": state])
        #expect(path.hasPrefix(state + "/mediate/gc_1-") && path.hasSuffix("-events.sqlite"))
    }

    /// A second run after an offline one delivers the first run's events (ids are stable across retries: the
    /// crash-safety tests check that).
    @Test func eventsQueuedOfflineInOneRunAreDeliveredByTheNext() async throws {
        let environment = [
            "XDG_STATE_HOME": FileManager.default.temporaryDirectory.appendingPathComponent("st-\(UUID().uuidString)")
                .path
        ]
        let sandbox = try await DemandSandbox.start()
        let http = CurlHTTPClient()
        // Run 1: load, then the network goes away before the impression is sent.
        let gate = GateHTTPClient(wrapping: http)
        let first = try CLIConfiguration.parse(Self.config(baseURL: sandbox.growthcatBaseURL)).makeNetworks(
            http: gate, environment: environment)
        let ad = try #require(
            try await first["gc"]?.network.load(AdRequest(placement: "rewarded_coins", format: .rewarded, userID: "u1"))
                .ad)
        gate.offline = true
        _ = try await ad.report(.impression)
        let queued = try #require(first["gc"]?.network as? GrowthCatNetwork).client
        #expect(await queued.pendingEventCount == 1, "kept on disk while offline")
        #expect(sandbox.growthcatRecords.events.isEmpty)
        // Run 2: a fresh configuration and client over the same default path, online again.
        let second = try CLIConfiguration.parse(Self.config(baseURL: sandbox.growthcatBaseURL)).makeNetworks(
            http: http, environment: environment)
        let client = try #require(second["gc"]?.network as? GrowthCatNetwork).client
        #expect(await client.pendingEventCount == 1, "the first run's event is still queued")
        let report = await client.flushAdEvents()
        #expect(report.sent == 1)
        #expect(sandbox.growthcatRecords.events.count == 1)
        await http.shutdown()
        await sandbox.shutdown()
    }
}

/// Passes requests through until `offline` is set, then fails them as a dropped connection would.
final class GateHTTPClient: HTTPClient {
    private let inner: any HTTPClient
    private let flag = LockedValue(false)
    init(wrapping inner: any HTTPClient) { self.inner = inner }
    var offline: Bool {
        get { flag.withLock { $0 } }
        set { flag.withLock { $0 = newValue } }
    }
    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        if offline { throw HTTPClientError(.connectionRefused, "offline (test)") }
        return try await inner.send(request)
    }
}

extension RunningSandbox {
    /// What the sandbox's GrowthCat routes received (their module's records).
    var growthcatRecords: GrowthCatRoutes.Records {
        routes(GrowthCatRoutes.self)?.records ?? GrowthCatRoutes.Records()
    }
}

import AdMediation
import AdMediationTesting
import CurlTransport
import DemandSandbox
import Foundation
import MARSSandbox
import Testing

@testable import MARSAds

/// Records telemetry calls as `"kind:label"` strings.
final class RecordingTelemetry: MozAdsTelemetry {
    let calls = LockedValue<[String]>([])
    var log: [String] { calls.withLock { $0 } }
    func cacheOutcomes() -> [String] { log.filter { $0.hasPrefix("cache:") }.map { String($0.dropFirst(6)) } }
    func recordBuildCacheError(label: String, value: String) { calls.withLock { $0.append("build:\(label)") } }
    func recordClientError(label: String, value: String) { calls.withLock { $0.append("error:\(label)") } }
    func recordClientOperationTotal(label: String) { calls.withLock { $0.append("op:\(label)") } }
    func recordDeserializationError(label: String, value: String) { calls.withLock { $0.append("deser:\(label)") } }
    func recordHttpCacheOutcome(label: String, value: String) { calls.withLock { $0.append("cache:\(label)") } }
}

/// A settable wall clock.
final class WallClock: Sendable {
    let seconds = LockedValue<Double>(1_800_000_000)
    var now: @Sendable () -> Date { { [self] in Date(timeIntervalSince1970: seconds.withLock { $0 }) } }
    func advance(_ by: Double) { seconds.withLock { $0 += by } }
}

func tempDB() -> String {
    FileManager.default.temporaryDirectory.appendingPathComponent("mars-\(UUID().uuidString).sqlite").path
}

struct MarsFixture {
    let sandbox: RunningSandbox
    let curl: CurlHTTPClient
    let client: MozAdsClient
    let telemetry: RecordingTelemetry
    let wall: WallClock

    func close() async {
        await curl.shutdown()
        await sandbox.shutdown()
    }
}

func marsFixture(
    _ scenario: SandboxScenario = SandboxScenario(), cache: MozAdsCacheConfig? = MozAdsCacheConfig(dbPath: tempDB()),
    contextID: (any MozAdsContextIDProvider)? = nil
) async throws -> MarsFixture {
    let sandbox = try await DemandSandbox.start(scenario: scenario)
    let curl = CurlHTTPClient()
    let telemetry = RecordingTelemetry()
    let wall = WallClock()
    var builder = MozAdsClientBuilder(httpClient: curl).environment(.custom(baseURL: sandbox.marsBaseURL)).telemetry(
        telemetry
    ).wallClock(wall.now)
    if let cache { builder = builder.cacheConfig(cache) }
    if let contextID { builder = builder.contextIDProvider(contextID) }
    return MarsFixture(sandbox: sandbox, curl: curl, client: builder.build(), telemetry: telemetry, wall: wall)
}

/// A client against a loopback server that answers `body` (and `status`, `headers`) to every request.
func craftedClient(
    status: Int = 200, headers: [(String, String)] = [], body: String,
    record: RequestLog? = nil
) throws -> (MozAdsClient, LoopbackHTTPServer, CurlHTTPClient, RecordingTelemetry) {
    let server = try LoopbackHTTPServer { request in
        record?.append(request)
        return .respond(
            .init(status: status, headers: [("Content-Type", "application/json")] + headers, body: Array(body.utf8)))
    }
    let curl = CurlHTTPClient()
    let telemetry = RecordingTelemetry()
    let client = MozAdsClientBuilder(httpClient: curl).environment(.custom(baseURL: server.baseURL + "/v1/")).telemetry(
        telemetry
    ).build()
    return (client, server, curl, telemetry)
}

let tile1 = [MozAdsPlacementRequest(placementId: "mock_tile_1")]

func callbackJSON(_ id: String, report: String? = "\"https://t.example/r?id=\(UUID().uuidString.prefix(4))\"") -> String
{
    (#"{"click":"https://t.example/c?id=\#(id)","#
        + #""impression":"https://t.example/i?id=\#(id)","report":\#(report ?? "null")}"#)
}

func tileJSON(_ id: String, report: String? = "\"https://t.example/r\"") -> String {
    (#"{"format":"tile","url":"https://a.example/\#(id)","image_url":"https://img.example/\#(id).png","#
        + #""block_key":"bk_\#(id)","name":"Tile \#(id)","callbacks":\#(callbackJSON(id, report: report))}"#)
}

/// Requests a crafted server received.
final class RequestLog: Sendable {
    private let list = LockedValue<[LoopbackHTTPServer.Request]>([])
    func append(_ request: LoopbackHTTPServer.Request) { list.withLock { $0.append(request) } }
    var requests: [LoopbackHTTPServer.Request] { list.withLock { $0 } }
}

extension RunningSandbox {
    /// What the sandbox's MARS routes received (their module's records).
    var marsRecords: MarsRoutes.Records { routes(MarsRoutes.self)?.records ?? MarsRoutes.Records() }
}

import AdMediation
import AdapterKit
import BuiltInNetworks
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOPosix
import ObliviousHTTP
import SandboxRouting
import ServiceLifecycle
import Synchronization

/// The demand sandbox: one local HTTP server (Hummingbird, loopback, port chosen by the kernel unless given)
/// that speaks every network's wire contract under its prefix — the built-ins' through the route modules of the
/// registry (`BuiltInNetworks`), any other network's through ``SandboxConfiguration/routeModules`` — with seeded
/// scenarios, fault injection and records of everything it received; it is also an Oblivious HTTP relay and gateway
/// for them under `/ohttp/`. The host itself serves only `/admin/` and `/ohttp/`.
public enum DemandSandbox {
    /// Runs `body` with a started sandbox and stops the sandbox afterwards, whether `body` returns or throws.
    public static func withSandbox<T: Sendable>(
        scenario: SandboxScenario = SandboxScenario(), configuration: SandboxConfiguration = SandboxConfiguration(),
        _ body: (RunningSandbox) async throws -> T
    ) async throws -> T {
        let sandbox = try await start(scenario: scenario, configuration: configuration)
        return try await withCleanup {
            try await body(sandbox)
        } finally: {
            await sandbox.shutdown()
        }
    }

    /// Starts the sandbox and returns once it accepts connections.
    public static func start(
        scenario: SandboxScenario = SandboxScenario(),
        configuration: SandboxConfiguration = SandboxConfiguration()
    ) async throws -> RunningSandbox {
        let state = SandboxState(scenario: scenario, configuration: configuration)
        let connections = SandboxConnections(limit: max(1, configuration.maxConnections))
        let (portStream, portContinuation) = AsyncStream<(port: Int, closed: EventLoopFuture<Void>?)>.makeStream()
        let app = Application(
            responder: CallbackResponder<SandboxContext> { request, context in
                try await state.handle(request, context: context)
            },
            // Accepted connections are released safely when the server stops before serving them (issue 31 item 7).
            server: ShutdownSafeHTTP1Channel.builder(
                configuration: HTTP1Channel.Configuration(idleTimeout: configuration.idleTimeAmount)),
            configuration: .init(
                address: .hostname(configuration.host, port: configuration.port), serverName: nil,
                availableConnectionsDelegate: connections),
            onServerRunning: { channel in
                portContinuation.yield((channel.localAddress?.port ?? 0, channel.closeFuture))
                portContinuation.finish()
            },
            logger: Logger(label: "DemandSandbox", factory: { _ in SwiftLogNoOpLogHandler() })
        )
        // The stream also ends when the server stops before it runs (a port in use fails the bind at once).
        let task = Task {
            defer { portContinuation.finish() }
            try await app.run()
        }
        var port = 0
        var listenerClosed: EventLoopFuture<Void>?
        for await value in portStream { (port, listenerClosed) = value }
        guard port > 0 else {
            task.cancel()
            let reason: String
            switch await task.result {
            case .failure(let error): reason = "\(error)"
            case .success: reason = "the server stopped before it was ready"
            }
            throw SandboxError("the sandbox could not listen on \(configuration.host):\(configuration.port): \(reason)")
        }
        let running = RunningSandbox(
            host: configuration.host, port: port, state: state, task: task, listenerClosed: listenerClosed,
            connections: connections)
        state.setBaseURL(running.rootURL)
        return running
    }
}

/// The request context: Hummingbird's core storage plus the channel, which fault injection needs.
struct SandboxContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    let channel: any Channel

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
    }
}

/// Everything mutable of a running sandbox, behind one lock.
final class SandboxState: Sendable {
    struct Mutable {
        var scenario: SandboxScenario
        var rng: SeededGenerator
        var records = SandboxRecords()
        var baseURL = ""
        var serial = 0
        /// Faults injected per module request (by network and the module's key: a reward validation's
        /// `sdk_event_id`), bounded by the scenario's `max_validation_faults`.
        var requestFaultCounts: [String: Int] = [:]
        /// Ad requests drawn per network (all its placements), for drift phases.
        var drawCounts: [String: Int] = [:]
        /// The OHTTP gateway's current key (a new one per sandbox; rotated through the admin API).
        var ohttpGateway = ObliviousHTTPGateway(keyID: 1)
    }

    let configuration: SandboxConfiguration
    let mutable: LockedValue<Mutable>
    /// The built-in networks' route modules (made for this sandbox by the registry), then the configuration's; a
    /// configured module named like a built-in network replaces the registry's.
    let routeModules: [any SandboxRouteModule]

    init(scenario: SandboxScenario, configuration: SandboxConfiguration) {
        self.configuration = configuration
        let configured = Set(configuration.routeModules.map(\.network))
        self.routeModules =
            BuiltInNetworks.makeRouteModules().filter { !configured.contains($0.network) }
            + configuration.routeModules
        self.mutable = LockedValue(Mutable(scenario: scenario, rng: SeededGenerator(seed: scenario.seed)))
    }

    var records: SandboxRecords { mutable.withLock { $0.records } }
    var scenario: SandboxScenario { mutable.withLock { $0.scenario } }
    var baseURL: String { mutable.withLock { $0.baseURL } }

    func setBaseURL(_ url: String) { mutable.withLock { $0.baseURL = url } }
    func setScenario(_ scenario: SandboxScenario) {
        mutable.withLock {
            $0.scenario = scenario
            $0.rng = SeededGenerator(seed: scenario.seed)
            $0.drawCounts = [:]
        }
    }
    func resetRecords() {
        mutable.withLock { $0.records = SandboxRecords() }
        for module in routeModules { module.resetRecords() }
    }

    func nextSerial() -> Int {
        mutable.withLock {
            $0.serial += 1
            return $0.serial
        }
    }

    func record(_ update: (inout SandboxRecords) -> Void) { mutable.withLock { update(&$0.records) } }

    /// Rolls the dice for one ad request of `network`/`placement`.
    func draw(network: String, placement: String?) -> Draw {
        mutable.withLock { m in
            let scenario = m.scenario.scenario(network: network, placement: placement)
            let count = m.drawCounts[network, default: 0]
            if m.drawCounts.count < 10_000 || m.drawCounts[network] != nil { m.drawCounts[network] = count + 1 }
            let (fillRate, prices) = scenario.phase(at: count)
            var fault: Fault?
            let roll = m.rng.nextUnit()
            var cumulative = 0.0
            for candidate in scenario.faults {
                cumulative += candidate.rate
                if roll < cumulative {
                    fault = candidate
                    break
                }
            }
            let fills = m.rng.nextUnit() < fillRate
            let ecpm = (prices.sample(&m.rng, maximum: 1_000_000) * 100).rounded() / 100
            let latencyMs = scenario.latencyMs.sample(&m.rng, maximum: Distribution.maxLatencyMs)
            let latency = Duration.microseconds(Int64((latencyMs * 1000).rounded()))  // ≤ 6e7 µs after the clamp
            return Draw(fault: fault, fills: fills, ecpm: ecpm, latency: latency)
        }
    }

    // MARK: Dispatch

    func handle(_ request: Request, context: SandboxContext) async throws -> Response {
        var request = request
        let path = request.uri.path
        let method = request.method.rawValue
        let body = try await request.collectBody(upTo: 1 << 20)
        let bodyBytes = Data(buffer: body)
        let query = Self.decodeQuery(request.uri.query)
        record { $0.requestCounts["\(method) \(path)", default: 0] += 1 }
        let incoming = Incoming(
            method: method, path: path, pathWithQuery: request.head.path ?? path, query: query,
            headers: request.headers, body: bodyBytes)
        if path.hasPrefix("/ohttp/") { return await ohttp(incoming, context: context) }
        return await dispatch(incoming, context: context)
    }

    /// Routes a request to the network it is for (also used by the OHTTP gateway for decrypted requests).
    func dispatch(_ incoming: Incoming, context: SandboxContext) async -> Response {
        let path = incoming.path, method = incoming.method
        if path.hasPrefix("/admin/") { return admin(incoming) }
        if let module = routeModule(for: path) { return await respond(incoming, with: module, context: context) }
        return Self.error(404, "not_found", "no route for \(method) \(path)")
    }

    struct Incoming: Sendable {
        var method: String
        var path: String
        var pathWithQuery: String
        var query: [String: String]
        var headers: HTTPFields
        var body: Data

        func header(_ name: String) -> String? {
            HTTPField.Name(name).flatMap { headers[$0] }
        }
    }

    static func decodeQuery(_ query: String?) -> [String: String] {
        guard let query, !query.isEmpty else { return [:] }
        var items: [String: String] = [:]
        for pair in query.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            items[formDecode(parts[0])] = parts.count > 1 ? formDecode(parts[1]) : ""
        }
        return items
    }

    /// A form-encoded query part: `+` is a space and `%XX` a byte; a part with a malformed escape, or whose bytes
    /// are not UTF-8, is kept as sent.
    static func formDecode(_ part: Substring) -> String {
        let utf8 = part.utf8
        guard utf8.contains(where: { $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "%") }) else { return String(part) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count)
        var index = utf8.startIndex
        while index < utf8.endIndex {
            let byte = utf8[index]
            index = utf8.index(after: index)
            switch byte {
            case UInt8(ascii: "+"):
                bytes.append(UInt8(ascii: " "))
            case UInt8(ascii: "%"):
                guard index < utf8.endIndex, let high = hexValue(utf8[index]) else { return String(part) }
                let next = utf8.index(after: index)
                guard next < utf8.endIndex, let low = hexValue(utf8[next]) else { return String(part) }
                bytes.append(high << 4 | low)
                index = utf8.index(after: next)
            default:
                bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self) ?? String(part)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    // MARK: Admin

    private func admin(_ incoming: Incoming) -> Response {
        switch (incoming.method, incoming.path) {
        case ("GET", "/admin/scenario"):
            return Self.json(200, try? JSONEncoder().encode(scenario))
        case ("PUT", "/admin/scenario"), ("POST", "/admin/scenario"):
            do {
                setScenario(try SandboxScenario.decode(json: incoming.body))
                return Self.json(200, Data(#"{"ok":true}"#.utf8))
            } catch {
                return Self.error(400, "invalid_scenario", "\(error)")
            }
        case ("GET", "/admin/records"):
            return Self.json(200, recordsJSON())
        case ("POST", "/admin/ohttp/rotate"):
            return Self.json(200, object: ["key_id": .number(Double(rotateOHTTPKey()))])
        case ("POST", "/admin/reset"):
            resetRecords()
            return Self.json(200, Data(#"{"ok":true}"#.utf8))
        default:
            return Self.error(404, "not_found", "no admin route \(incoming.method) \(incoming.path)")
        }
    }

}

/// The sandbox's connection cap (``SandboxConfiguration/maxConnections``) as Hummingbird's delegate, with the counts a
/// test reads. Its methods run on the listener's event loop; the counts are atomics shared by the delegate's copies.
struct SandboxConnections: AvailableConnectionsDelegate {
    let limit: Int
    let open: SharedCount
    let peak: SharedCount

    init(limit: Int) {
        self.limit = limit
        open = SharedCount()
        peak = SharedCount()
    }

    func connectionOpened() {
        let now = open.add(1)
        if now > peak.load() { peak.store(now) }
    }

    func connectionClosed() { _ = open.add(-1) }

    func isAcceptingNewConnections() -> Bool { open.load() < limit }
}

/// An integer shared by reference.
final class SharedCount: Sendable {
    private let value = Atomic<Int>(0)

    func load() -> Int { value.load(ordering: .relaxed) }
    func store(_ new: Int) { value.store(new, ordering: .relaxed) }
    /// Adds `delta`; returns the new value.
    func add(_ delta: Int) -> Int { value.wrappingAdd(delta, ordering: .relaxed).newValue }
}

import AdMediation
import AdMediationTesting
import AdTransport
import CurlTransport
import Foundation
import Synchronization

/// The hostile server kinds the project knows, each on a real loopback server, for the noisy-neighbour matrix
/// (issue 31 item 1): a good line and a hostile one share one `CurlHTTPClient` (one engine thread).
public enum HostileKind: String, CaseIterable, Sendable, CustomStringConvertible {
    /// 60 000 empty response headers (300 KB, under libcurl's own cap).
    case headerFlood = "header flood"
    /// A 4 KB answer, one byte every 5 ms: ended by the request's deadline.
    case slowDrip = "slow drip"
    /// A close-delimited answer whose connection is never closed: ended by the deadline.
    case neverClosing = "never-closing"
    /// An endless body in 64 KiB writes: ended by the body cap (8 MiB).
    case hugeBody = "huge body"
    /// Every answer a 302 to the next path: ended by the redirect limit.
    case redirectChain = "redirect chain"
    /// 1 000 bytes of a 200 KB body, then a TCP reset.
    case reset
    /// Notices to a host that reads and never answers: 20 at once, each ended by its deadline.
    case noticeSink = "notice sink"

    /// The kind's name.
    public var description: String { rawValue }
}

/// One hostile server of a kind, and the traffic a line sends it.
public final class HostileNeighbour: Sendable {
    /// Its kind.
    public let kind: HostileKind
    private let server: LoopbackHTTPServer
    /// The deadline of each hostile request: what ends the slow kinds (500 ms); 10 s for the others, which end on
    /// their own (a cap, the redirect limit, a reset) even on a loaded machine.
    public let deadline: Duration

    /// Starts the server.
    public init(_ kind: HostileKind) throws {
        self.kind = kind
        self.deadline = [.slowDrip, .neverClosing, .noticeSink].contains(kind) ? .milliseconds(500) : .seconds(10)
        switch kind {
        case .headerFlood:
            let headers = [(String, String)](repeating: ("h", ""), count: 60_000)
            server = try LoopbackHTTPServer { _ in .respond(.init(headers: headers, body: Array("x".utf8))) }
        case .slowDrip:
            let body = [UInt8](repeating: 0x61, count: 4096)
            server = try LoopbackHTTPServer { _ in
                .slowDrip(.init(body: body), chunkBytes: 1, interval: .milliseconds(5))
            }
        case .neverClosing:
            let head = Array("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nan".utf8)
            server = try LoopbackHTTPServer { _ in .rawAndHold(head) }
        case .hugeBody:
            let head = Array("HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n\r\n".utf8)
            let chunk = [UInt8](repeating: 0x62, count: 64 << 10)
            server = try LoopbackHTTPServer { _ in .stream(head: head, chunk: chunk) }
        case .redirectChain:
            server = try LoopbackHTTPServer { request in
                let next = (Int(request.path.dropFirst("/r/".count)) ?? 0) + 1
                return .respond(.init(status: 302, headers: [("Location", "/r/\(next)")]))
            }
        case .reset:
            let body = [UInt8](repeating: 0x63, count: 200_000)
            server = try LoopbackHTTPServer { _ in .resetMidBody(.init(body: body), afterBytes: 1000) }
        case .noticeSink:
            server = try LoopbackHTTPServer { _ in .silent }
        }
    }

    /// Stops the server.
    public func stop() {
        server.stop()
    }

    deinit { stop() }

    /// Requests the server has received (request heads).
    public var requestsReceived: Int { server.requestsReceived }

    private var baseURL: String { server.baseURL }

    /// One exchange of the hostile line on `client`; returns how it ended (`error:<code>` or `status <n>`; for the
    /// notice sink, the codes of its 20 notices).
    public func exchange(on client: CurlHTTPClient) async -> String {
        switch kind {
        case .noticeSink:
            let url = baseURL + "/notice"
            let codes = await withTaskGroup(of: String.self) { group in
                for n in 0..<20 {
                    group.addTask {
                        let request = HTTPRequest(
                            method: .post, url: url + "?n=\(n)", body: Data("{}".utf8), timeout: self.deadline)
                        return Self.outcome(await Self.result { try await client.send(request) })
                    }
                }
                var codes: [String: Int] = [:]
                for await code in group { codes[code, default: 0] += 1 }
                return codes
            }
            return codes.sorted { $0.key < $1.key }.map { "\($0.value) × \($0.key)" }.joined(separator: ", ")
        default:
            let path = kind == .redirectChain ? "/r/0" : "/"
            let request = HTTPRequest(url: baseURL + path, timeout: deadline)
            return Self.outcome(await Self.result { try await client.send(request) })
        }
    }

    private static func result(_ send: () async throws -> HTTPResponse) async -> Result<HTTPResponse, any Error> {
        do { return .success(try await send()) } catch { return .failure(error) }
    }

    private static func outcome(_ result: Result<HTTPResponse, any Error>) -> String {
        switch result {
        case .success(let response): "status \(response.status)"
        case .failure(let error as HTTPClientError): "error:\(error.code.rawValue)"
        case .failure(let error): "error:\(error)"
        }
    }
}

/// One row of the noisy-neighbour matrix.
public struct NeighbourRow: Sendable, CustomStringConvertible {
    /// The hostile kind.
    public var kind: HostileKind
    /// Median latency of the good request alone (ms).
    public var aloneMs: Double
    /// Median latency of the good request while the hostile line ran (ms).
    public var besideMs: Double
    /// Good requests that ended while hostile traffic was in flight, and how many failed.
    public var goodBeside: Int
    /// Good requests that did not answer 200 (alone or beside).
    public var goodFailures: Int
    /// How the hostile line's first exchange ended.
    public var hostileOutcome: String
    /// Hostile exchanges run while the good line was measured.
    public var hostileExchanges: Int
    /// How long `shutdown()` took with a hostile exchange in flight (ms).
    public var shutdownMs: Double

    /// `kind: alone … ms, beside … ms, …`.
    public var description: String {
        "\(kind): alone \(Self.ms(aloneMs)) ms, beside \(Self.ms(besideMs)) ms (\(goodBeside) good requests beside, "
            + "\(goodFailures) failed), hostile: \(hostileOutcome) (\(hostileExchanges) exchanges), shutdown "
            + "\(Self.ms(shutdownMs)) ms"
    }

    static func ms(_ value: Double) -> String { String(format: "%.2f", value) }
}

/// Measures one row: the good line's median latency alone (`samples` requests), then beside the hostile line (at
/// least `samples` good requests, each started while a hostile exchange was in flight), then how long the client
/// takes to shut down with a hostile exchange in flight. One `CurlHTTPClient` carries both lines.
public func measureNeighbour(_ kind: HostileKind, samples: Int) async throws -> NeighbourRow {
    let good = try LoopbackHTTPServer { _ in .respond(.text("ok")) }
    defer { good.stop() }
    let hostile = try HostileNeighbour(kind)
    defer { hostile.stop() }
    let client = CurlHTTPClient()
    var failures = 0
    func goodRequest() async -> Double? {
        let start = ContinuousClock.now
        let response = try? await client.send(HTTPRequest(url: good.baseURL + "/", timeout: .seconds(10)))
        guard response?.status == 200 else {
            failures += 1
            return nil
        }
        return (ContinuousClock.now - start).milliseconds
    }
    // Warm: the good line's connection is set up, so each sample is one loopback round trip.
    _ = await goodRequest()
    var alone: [Double] = []
    for _ in 0..<samples { if let ms = await goodRequest() { alone.append(ms) } }

    let inFlight = Atomic<Int>(0)
    let stop = Atomic<Bool>(false)
    let hostileTask = Task { () -> (String, Int) in
        var first: String?
        var exchanges = 0
        repeat {
            inFlight.add(1, ordering: .relaxed)
            let outcome = await hostile.exchange(on: client)
            inFlight.subtract(1, ordering: .relaxed)
            exchanges += 1
            if first == nil { first = outcome }
        } while !stop.load(ordering: .relaxed)
        return (first ?? "", exchanges)
    }
    // Wait (bounded) for the hostile request to reach its server, so the good samples overlap it.
    let arrival = ContinuousClock.now + .seconds(5)
    while hostile.requestsReceived == 0 && ContinuousClock.now < arrival { try await Task.sleep(for: .milliseconds(1)) }
    var beside: [Double] = []
    var overlapping = 0
    while overlapping < samples {
        let before = inFlight.load(ordering: .relaxed) > 0
        guard let ms = await goodRequest() else { continue }
        if before && inFlight.load(ordering: .relaxed) > 0 {
            beside.append(ms)
            overlapping += 1
        }
        if failures > samples { break }
    }
    stop.store(true, ordering: .relaxed)
    let (outcome, exchanges) = await hostileTask.value
    // One more hostile exchange in flight, then the shutdown: it must not wait for the hostile server.
    let last = Task { await hostile.exchange(on: client) }
    let arrivals = hostile.requestsReceived
    let second = ContinuousClock.now + .seconds(5)
    while hostile.requestsReceived == arrivals && ContinuousClock.now < second {
        try await Task.sleep(for: .milliseconds(1))
    }
    let shutdownStart = ContinuousClock.now
    await client.shutdown()
    let shutdownMs = (ContinuousClock.now - shutdownStart).milliseconds
    _ = await last.value
    return NeighbourRow(
        kind: kind, aloneMs: median(alone), besideMs: median(beside), goodBeside: beside.count,
        goodFailures: failures, hostileOutcome: outcome, hostileExchanges: exchanges, shutdownMs: shutdownMs)
}

private func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return .nan }
    return sorted.count % 2 == 1
        ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}

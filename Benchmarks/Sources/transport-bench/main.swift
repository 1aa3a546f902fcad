// Transport benchmark: CurlHTTPClient vs URLSessionHTTPClient vs URLSession itself (FoundationNetworking) vs
// AsyncHTTPClient against the same loopback keep-alive server (TCP_NODELAY), which runs in a child process so the
// CPU time measured here is the client's alone. Usage: transport-bench [requests-per-cell]   (the child is started
// as `transport-bench serve`)
import AdMediation
import AdMediationTesting
import AdTransport
import AsyncHTTPClient
import CurlTransport
import Foundation
import URLSessionTransport

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

if CommandLine.arguments.dropFirst().first == "serve" {
    let body = [UInt8](repeating: 0x61, count: 100)
    let server = try LoopbackHTTPServer { _ in .respond(.init(headers: [("Content-Type", "text/plain")], body: body)) }
    print(server.port)
    fflush(nil)
    while true { sleep(60) }
}

// Usage: transport-bench [requests-per-cell] [--json]
let json = CommandLine.arguments.contains("--json")
let requestsPerCell = Int(CommandLine.arguments.dropFirst().first { !$0.hasPrefix("--") } ?? "") ?? 5000
let child = Process()
child.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
child.arguments = ["serve"]
let pipe = Pipe()
child.standardOutput = pipe
try child.run()
let portLine = String(decoding: pipe.fileHandleForReading.availableData, as: UTF8.self).trimmingCharacters(
    in: .whitespacesAndNewlines)
let url = "http://127.0.0.1:\(portLine)/bench"
defer { kill(child.processIdentifier, SIGKILL) }

func cpuMicros() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1e6
        + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec)
}

/// Context switches of this process so far (every thread, voluntary and involuntary).
func contextSwitches() -> Int {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return usage.ru_nvcsw + usage.ru_nivcsw
}

struct Cell {
    var rps: Double
    var cpuPerRequest: Double
    var switchesPerRequest: Double
}

/// Runs `total` requests with `concurrency` workers; returns requests/s and client CPU µs per request.
func measure(concurrency: Int, total: Int, _ send: @escaping @Sendable () async throws -> Void) async throws -> Cell {
    for _ in 0..<min(200, total) { try await send() }  // warm-up: connections, caches
    let cpu0 = cpuMicros()
    let switches0 = contextSwitches()
    let start = ContinuousClock.now
    try await withThrowingTaskGroup(of: Void.self) { group in
        for worker in 0..<concurrency {
            group.addTask {
                var i = worker
                while i < total {
                    try await send()
                    i += concurrency
                }
            }
        }
        try await group.waitForAll()
    }
    let seconds = (ContinuousClock.now - start).seconds
    return Cell(
        rps: Double(total) / seconds, cpuPerRequest: (cpuMicros() - cpu0) / Double(total),
        switchesPerRequest: Double(contextSwitches() - switches0) / Double(total))
}

let curl = CurlHTTPClient()
let sessionConfiguration = URLSessionConfiguration.default
sessionConfiguration.httpMaximumConnectionsPerHost = 64
let session = URLSession(configuration: sessionConfiguration)
var urlSessionConfiguration = URLSessionHTTPClient.Configuration()
urlSessionConfiguration.maxConnectionsPerHost = 64
let urlSessionClient = URLSessionHTTPClient(configuration: urlSessionConfiguration)
let ahc = HTTPClient(eventLoopGroupProvider: .singleton)
let request = HTTPRequest(url: url, timeout: .seconds(10))
let urlRequest = URLRequest(url: URL(string: url)!)

let clients: [(String, @Sendable () async throws -> Void)] = [
    ("CurlHTTPClient", { _ = try await curl.send(request) }),
    ("URLSessionHTTPClient", { _ = try await urlSessionClient.send(request) }),
    (
        "URLSession",
        {
            let (data, _) = try await session.data(for: urlRequest)
            precondition(data.count == 100)
        }
    ),
    (
        "AsyncHTTPClient",
        {
            let response = try await ahc.execute(HTTPClientRequest(url: url), timeout: .seconds(10))
            _ = try await response.body.collect(upTo: 1 << 20)
        }
    ),
]

var table: [String: [Int: Cell]] = [:]
// BENCH_ONLY=CurlHTTPClient runs one client (for profiling); the table then shows that client alone.
let only = ProcessInfo.processInfo.environment["BENCH_ONLY"]
for (name, send) in clients where only == nil || only == name {
    for concurrency in [1, 8, 64] {
        // URLSession is ~10x slower: give it fewer requests so a run stays short.
        let total = name.hasPrefix("URLSession") ? max(500, requestsPerCell / 5) : requestsPerCell
        let cell = try await measure(concurrency: concurrency, total: total, send)
        table[name, default: [:]][concurrency] = cell
        FileHandle.standardError.write(
            Data(
                ("\(name) c=\(concurrency): \(Int(cell.rps)) req/s, \(String(format: "%.1f", cell.cpuPerRequest)) µs "
                    + "CPU/req, \(String(format: "%.2f", cell.switchesPerRequest)) context switches/req\n").utf8))
    }
}
try await ahc.shutdown().get()
await curl.shutdown()
await urlSessionClient.shutdown()

if json {
    // {"CurlHTTPClient": {"1": {"rps": …, "cpu_us_per_request": …}, "8": …}, …}
    var object: [String: [String: [String: Double]]] = [:]
    for (name, row) in table {
        for (concurrency, cell) in row {
            object[name, default: [:]]["\(concurrency)"] = [
                "rps": cell.rps, "cpu_us_per_request": cell.cpuPerRequest,
                "context_switches_per_request": cell.switchesPerRequest,
            ]
        }
    }
    let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
    print(String(decoding: data, as: UTF8.self))
}
if only != nil || json {
    kill(child.processIdentifier, SIGKILL)  // `exit` skips the `defer` above
    exit(0)
}
print("| client | c=1 req/s | c=8 req/s | c=64 req/s | CPU µs/req c=1 | CPU µs/req c=8 | CPU µs/req c=64 |")
print("|---|---|---|---|---|---|---|")
for (name, _) in clients {
    let row = table[name]!
    print(
        "| \(name) | \(Int(row[1]!.rps)) | \(Int(row[8]!.rps)) | \(Int(row[64]!.rps)) | "
            + String(
                format: "%.1f | %.1f | %.1f |", row[1]!.cpuPerRequest, row[8]!.cpuPerRequest, row[64]!.cpuPerRequest))
}
let c8 = table["CurlHTTPClient"]![8]!.rps
print("")
print(
    String(
        format: "ratios at c=8: curl/URLSession = %.1fx, curl/AsyncHTTPClient = %.2fx",
        c8 / table["URLSession"]![8]!.rps, c8 / table["AsyncHTTPClient"]![8]!.rps))

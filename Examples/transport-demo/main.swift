// Sends requests through CurlHTTPClient to a loopback server it starts, and prints what happened:
// a GET, a POST, 64 concurrent requests over reused connections, a deadline and a cancellation.
import AdMediation
import AdMediationTesting
import AdTransport
import CurlTransport
import Foundation

let server = try LoopbackHTTPServer { request in
    switch request.path {
    case "/slow": .respond(.text("late", delay: .seconds(2)))
    case "/echo": .respond(.init(headers: [("Content-Type", "application/json")], body: request.body))
    default: .respond(.text("hello from \(request.path)"))
    }
}
let client = CurlHTTPClient()

let get = try await client.send(HTTPRequest(url: server.baseURL + "/hello"))
print("GET /hello -> \(get.status) \(String(decoding: get.body, as: UTF8.self))")

let post = try await client.send(
    HTTPRequest(
        method: .post, url: server.baseURL + "/echo",
        headers: ["Content-Type": "application/json"], body: Data(#"{"ad":"demo"}"#.utf8)))
print("POST /echo -> \(post.status) \(String(decoding: post.body, as: UTF8.self))")

let start = ContinuousClock.now
let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
    for i in 0..<64 { group.addTask { try await client.send(HTTPRequest(url: server.baseURL + "/item/\(i)")).status } }
    var counts: [Int: Int] = [:]
    for try await status in group { counts[status, default: 0] += 1 }
    return counts
}
let elapsed = Int((ContinuousClock.now - start).milliseconds)
print("64 concurrent GETs -> \(statuses) in \(elapsed) ms over \(server.connectionsAccepted) connections")

do {
    _ = try await client.send(HTTPRequest(url: server.baseURL + "/slow", timeout: .milliseconds(250)))
} catch let error as HTTPClientError {
    print("GET /slow with a 250 ms deadline -> \(error)")
}

let task = Task { try await client.send(HTTPRequest(url: server.baseURL + "/slow")) }
try await Task.sleep(for: .milliseconds(50))
task.cancel()
do { _ = try await task.value } catch let error as HTTPClientError { print("cancelled GET /slow -> \(error)") }

await client.shutdown()
print("live curl handles after shutdown: \(client.statistics.liveHandles)")
server.stop()

import AdMediation
import AdMediationTesting
import AdTransport
import CurlTransport
import Foundation
import Testing

/// Issue 36's idle cost, as a rule: an idle libcurl engine thread sleeps until it has work. Real time by necessity
/// (the rule is about the operating system's wake-ups), so it lives with the wall-clock tests.
@Suite("Idle transport", .timeLimit(.minutes(1)))
struct IdleEngineTests {
    /// The ids of this process's threads called `name`.
    static func threads(named name: String) -> Set<String> {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return Set(
            tasks.filter { id in
                let comm = try? String(contentsOfFile: "/proc/self/task/\(id)/comm", encoding: .utf8)
                return comm?.trimmingCharacters(in: .whitespacesAndNewlines) == name
            })
    }

    /// The voluntary context switches (sleeps that ended) of thread `id`, or nil once it is gone.
    static func wakeUps(ofThread id: String) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/task/\(id)/status", encoding: .utf8) else {
            return nil
        }
        let line = status.split(separator: "\n").first { $0.hasPrefix("voluntary_ctxt_switches:") }
        return line.flatMap { Int($0.split(separator: ":").last?.trimmingCharacters(in: .whitespaces) ?? "") }
    }

    @Test("an idle libcurl engine thread sleeps until it has work: no wake-up while nothing is in flight")
    func anIdleEngineDoesNotPoll() async throws {
        let server = try LoopbackHTTPServer { _ in .respond(.text("ok")) }
        defer { server.stop() }
        let earlier = Self.threads(named: "CurlHTTPClient")
        try await withCurlHTTPClient { http in
            _ = try await http.send(HTTPRequest(url: server.baseURL + "/"))
            // This client's engine thread, and any another test started meanwhile: the quietest one is this one.
            let engines = Self.threads(named: "CurlHTTPClient").subtracting(earlier)
            #expect(!engines.isEmpty, "the engine thread is named CurlHTTPClient")
            let before = engines.compactMap { id in Self.wakeUps(ofThread: id).map { (id, $0) } }
            try await Task.sleep(for: .milliseconds(2500))
            let deltas = before.compactMap { id, count in Self.wakeUps(ofThread: id).map { $0 - count } }
            let quietest = try #require(deltas.min())
            // Polling once a second (the old engine) wakes it 2-3 times in 2.5 s; a sleeping one at most once
            // (a connection-cache timer of libcurl's own).
            #expect(quietest <= 1, "the idle engine thread woke \(quietest) times in 2.5 s")
        }
    }
}

import AdMediation
import AdTransport
import CurlTransport
import DemandSandbox
import Foundation
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The sandbox stops cleanly while many connections are being accepted and served (issue 31 item 7). A crash kills
/// the process, so each round runs in a child: this test bundle again, filtered to `ShutdownChild`, which is enabled
/// only in the child (`SANDBOX_SHUTDOWN_CHILD` = connections per round).
@Suite("Sandbox shutdown under concurrency", .serialized, .timeLimit(.minutes(5)))
struct SandboxShutdownTests {
    /// 3 rounds × 200 connections in the plain suite.
    @Test func shuttingDownMidFlightNeverCrashes() async throws {
        let outcome = try await ShutdownRounds.run(rounds: 3, connections: 200)
        #expect(outcome.crashes.isEmpty, "crashed rounds: \(outcome.crashes)")
        #expect(outcome.completed == 3, "rounds that reported back: \(outcome.completed) of 3")
    }

    /// The issue's figure: 20 rounds × 2 000 connections, each shut down mid-flight (`SANDBOX_SHUTDOWN_ROUNDS=20`;
    /// `SANDBOX_SHUTDOWN_CONNECTIONS` overrides 2 000).
    @Test(.enabled(if: ShutdownRounds.longRounds > 0))
    func shuttingDownMidFlightManyTimesAtHighConcurrencyNeverCrashes() async throws {
        let rounds = ShutdownRounds.longRounds
        let environment = ProcessInfo.processInfo.environment
        let connections = Int(environment["SANDBOX_SHUTDOWN_CONNECTIONS"] ?? "") ?? 2000
        let started = ContinuousClock.now
        let outcome = try await ShutdownRounds.run(rounds: rounds, connections: connections)
        print(
            "sandbox shutdown: \(rounds) rounds × \(connections) connections, \(outcome.crashes.count) crashes, "
                + "\(outcome.completed) clean, served before shutdown \(outcome.served), "
                + "\(Int((ContinuousClock.now - started) / .milliseconds(1))) ms")
        #expect(outcome.crashes.isEmpty, "crashed rounds: \(outcome.crashes)")
        #expect(outcome.completed == rounds)
    }
}

/// The child's side: one round (start, load with `connections` concurrent requests, shut down once a tenth of them
/// were answered, then wait for every request to end). Prints `round done served=N failed=M` when it got through.
@Suite("Sandbox shutdown child")
struct ShutdownChild {
    @Test(.enabled(if: ShutdownRounds.childConnections > 0))
    func oneRoundOfShutdownMidFlight() async throws {
        let connections = ShutdownRounds.childConnections
        let sandbox = try await DemandSandbox.start()
        var configuration = CurlHTTPClient.Configuration()
        configuration.defaultTimeout = .seconds(20)
        let client = CurlHTTPClient(configuration: configuration)
        let (answered, answeredContinuation) = AsyncStream<Bool>.makeStream()
        let url = sandbox.appOpenBaseURL + "/appopen/v1/ad?placement=launch"
        let requests = Task {
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<connections {
                    group.addTask {
                        let ok = (try? await client.send(HTTPRequest(url: url))) != nil
                        answeredContinuation.yield(ok)
                    }
                }
            }
            answeredContinuation.finish()
        }
        var served = 0, failed = 0, shutDown = false
        for await ok in answered {
            if ok { served += 1 } else { failed += 1 }
            if !shutDown && served + failed >= max(1, connections / 10) {
                shutDown = true
                await sandbox.shutdown()
            }
        }
        await requests.value
        if !shutDown { await sandbox.shutdown() }
        await client.shutdown()
        print("round done served=\(served) failed=\(failed)")
    }
}

/// Runs rounds in child processes and counts how they ended.
enum ShutdownRounds {
    /// Connections per round when this process is a child; 0 otherwise.
    static let childConnections = Int(ProcessInfo.processInfo.environment["SANDBOX_SHUTDOWN_CHILD"] ?? "") ?? 0
    /// Rounds of the long run (`SANDBOX_SHUTDOWN_ROUNDS`); 0 leaves it off.
    static let longRounds = Int(ProcessInfo.processInfo.environment["SANDBOX_SHUTDOWN_ROUNDS"] ?? "") ?? 0

    struct Outcome {
        /// Round number and how the child ended, for each round that did not end cleanly.
        var crashes: [String] = []
        /// Rounds whose child printed its result and exited 0.
        var completed = 0
        /// Requests answered before the sandbox stopped, over all rounds.
        var served = 0
    }

    static func run(rounds: Int, connections: Int) async throws -> Outcome {
        var outcome = Outcome()
        for round in 0..<rounds {
            let result = try await runChild(connections: connections, deadline: .seconds(60))
            let line = result.output.split(separator: "\n").first { $0.hasPrefix("round done") }
            if result.status == 0, let line {
                outcome.completed += 1
                let served = line.split(separator: " ").first { $0.hasPrefix("served=") }
                outcome.served += served.flatMap { Int($0.dropFirst("served=".count)) } ?? 0
            } else {
                let crash = result.output.split(separator: "\n").first { $0.contains("Fatal error") }
                outcome.crashes.append(
                    "round \(round): \(result.description)\(crash.map { " (\($0.prefix(160)))" } ?? "")")
            }
        }
        return outcome
    }

    struct ChildResult {
        var status: Int32
        var signalled: Bool
        var timedOut: Bool
        var output: String

        var description: String {
            timedOut ? "killed at its deadline" : signalled ? "signal \(status)" : "exit \(status)"
        }
    }

    /// Runs this test bundle filtered to the child test (through TestSupport's `posix_spawnp` runner: Foundation's
    /// `Process.run()` copies the environment unsafely while other tests run, and crashed the suite once). The child
    /// is killed at `deadline`.
    static func runChild(connections: Int, deadline: Duration) async throws -> ChildResult {
        var environment = ProcessInfo.processInfo.environment
        environment["SANDBOX_SHUTDOWN_CHILD"] = String(connections)
        environment["SANDBOX_SHUTDOWN_ROUNDS"] = nil
        environment["SWIFT_BACKTRACE"] = "enable=no"
        let result = try await ChildProcess.run(
            CommandLine.arguments[0], ["--testing-library", "swift-testing", "--filter", "ShutdownChild"],
            environment: environment, deadline: deadline)
        // ChildProcess reports a signal as 128 + its number; this report names the signal itself.
        return ChildResult(
            status: result.signalled ? result.status - 128 : result.status, signalled: result.signalled,
            timedOut: result.timedOut, output: result.out + result.err)
    }
}

struct SandboxShutdownTestError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

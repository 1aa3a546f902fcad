import Foundation
import TestSupport
import Testing

/// The examples print the same thing on every run (issue 33 item 10): their clocks are simulated.
@Suite("Examples: reproducible output", .serialized, .timeLimit(.minutes(3)))
struct ExampleOutputTests {
    static func example(_ name: String) throws -> String {
        let path = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent(name).path
        try #require(FileManager.default.isExecutableFile(atPath: path), "\(name) is built with the tests")
        return path
    }

    static func run(_ name: String) async throws -> String {
        let result = try await ChildProcess.run(try example(name), [], deadline: .seconds(60))
        #expect(!result.timedOut && result.status == 0, "\(name): \(result.err)")
        return result.out
    }

    @Test("banner-timeline prints the same impression times on every run")
    func bannerTimelineIsTheSameEveryRun() async throws {
        let first = try await Self.run("banner-timeline")
        let second = try await Self.run("banner-timeline")
        #expect(first.contains("impression logged for cb_ad_1"))
        #expect(first == second, "first:\n\(first)\nsecond:\n\(second)")
    }

    @Test("rewarded-flow prints its steps in time order")
    func rewardedFlowIsInTimeOrder() async throws {
        let output = try await Self.run("rewarded-flow")
        let times = output.split(separator: "\n").compactMap { line -> Double? in
            guard line.hasPrefix("t="), let end = line.firstIndex(of: "s") else { return nil }
            return Double(line[line.index(line.startIndex, offsetBy: 2)..<end])
        }
        #expect(times.count >= 5, "\(output)")
        #expect(times == times.sorted(), "\(output)")
        #expect(output.contains("the user tries to close"))
    }
}

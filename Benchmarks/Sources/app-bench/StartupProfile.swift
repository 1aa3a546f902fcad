// `app-bench startup-profile [runs]`: where the GrowthCat lap of the start-up goes, by decomposition — each first use
// inside `GrowthCatClient.Configuration`'s defaults (swift-log's default handler, swift-metrics' factory, Foundation's
// `URL` for the default media folder) timed on its own, first thing in a fresh process, then the configuration and the
// client themselves. No sampling profiler works here (perf has no hardware counters on this VM, callgrind crashes on
// the Swift runtime), so the profile is these laps, medians over fresh processes.
import CoreMetrics
import CurlTransport
import Foundation
import GrowthCatAds
import Logging

enum StartupProfile {
    static let laps = [
        "swift-log: first Logger(label:) (default handler)", "swift-metrics: first MetricsSystem.factory",
        "Foundation: first URL path work", "GrowthCatClient.Configuration (its defaults now warm)",
        "CurlHTTPClient + GrowthCatClient",
    ]

    /// The parent: `runs` fresh processes, the median and p90 of each lap.
    static func run(runs: Int) throws {
        var samples: [[Double]] = Array(repeating: [], count: laps.count)
        let directory = NSTemporaryDirectory() + "app-bench-profile-\(getpid())"
        for _ in 0..<runs {
            let line = try Child(["startup-profile-child", directory]).output()
            let values = line.split(whereSeparator: { $0 == " " || $0 == "\n" }).compactMap { Double($0) }
            guard values.count == laps.count else { throw BenchError("startup-profile-child printed \(line)") }
            for (index, value) in values.enumerated() { samples[index].append(value) }
        }
        try? FileManager.default.removeItem(atPath: directory)
        print("startup-profile: \(runs) fresh processes, µs on the calling thread (median, p90)")
        for (index, name) in laps.enumerated() {
            let sorted = samples[index].sorted()
            let median = sorted[sorted.count / 2]
            let p90 = sorted[min(sorted.count - 1, sorted.count * 9 / 10)]
            let label = name.padding(toLength: 56, withPad: " ", startingAt: 0)
            print("  " + label + String(format: "%8.0f %8.0f", median, p90))
        }
    }

    /// One fresh process: the laps, space-separated, in µs.
    static func child(_ arguments: [String]) throws {
        let directory = arguments.first ?? NSTemporaryDirectory()
        var values: [Double] = []
        var mark = ContinuousClock.now
        func lap() {
            let now = ContinuousClock.now
            values.append((now - mark).ms * 1000)
            mark = now
        }
        let logger = Logger(label: "profile")
        lap()
        let factory = MetricsSystem.factory
        lap()
        _ = URL(fileURLWithPath: directory + "/gc.sqlite").deletingPathExtension().lastPathComponent
        lap()
        var configuration = GrowthCatClient.Configuration(
            apiKey: "gc_test_demo", baseURL: "http://127.0.0.1:9", eventQueuePath: directory + "/gc.sqlite")
        lap()
        configuration.logger = logger
        configuration.metrics = factory
        _ = try GrowthCatClient(configuration: configuration, http: CurlHTTPClient())
        lap()
        print(values.map { String(format: "%.1f", $0) }.joined(separator: " "))
    }
}

// `app-bench idle [minutes]`: a process holding a banner slot (30 s refresh through a Mediator) and a loaded app-open
// ad, doing nothing else, in real time: wake-ups (voluntary context switches) and CPU of every thread, per minute,
// read from /proc/self/task/*. The sandbox runs in a child process.
import AdMediation
import AdPresentation
import AppOpenAds
import ChartboostBanners
import CurlTransport
import Foundation
import Logging

enum IdleBench {
    /// One thread's counters at one instant.
    struct ThreadSample {
        var name: String
        var voluntary: Int
        var involuntary: Int
        /// User + system CPU, in clock ticks.
        var ticks: Int
    }

    /// Every thread of this process, by thread id (blocking reads of /proc: called from the main thread).
    static func sampleThreads() -> [Int: ThreadSample] {
        var samples: [Int: ThreadSample] = [:]
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        for entry in tasks {
            guard let tid = Int(entry),
                let status = try? String(contentsOfFile: "/proc/self/task/\(entry)/status", encoding: .utf8),
                let stat = try? String(contentsOfFile: "/proc/self/task/\(entry)/stat", encoding: .utf8)
            else { continue }
            var sample = ThreadSample(name: "?", voluntary: 0, involuntary: 0, ticks: 0)
            for line in status.split(separator: "\n") {
                let parts = line.split(separator: ":", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                guard parts.count == 2 else { continue }
                switch parts[0] {
                case "Name": sample.name = parts[1]
                case "voluntary_ctxt_switches": sample.voluntary = Int(parts[1]) ?? 0
                case "nonvoluntary_ctxt_switches": sample.involuntary = Int(parts[1]) ?? 0
                default: break
                }
            }
            // stat: "tid (comm) state ..."; utime and stime are fields 14 and 15, i.e. 12 and 13 after the ")".
            if let close = stat.lastIndex(of: ")") {
                let fields = stat[stat.index(after: close)...].split(separator: " ")
                if fields.count > 12 { sample.ticks = (Int(fields[11]) ?? 0) + (Int(fields[12]) ?? 0) }
            }
            samples[tid] = sample
        }
        return samples
    }

    static func run(minutes: Int, json: Bool) async throws {
        let (child, root) = try startSandboxChild()
        defer { child.kill() }
        let quiet = Logger(label: "bench", factory: { _ in SwiftLogNoOpLogHandler() })
        let http = CurlHTTPClient(logger: quiet)
        let chartboost = ChartboostNetwork(
            configuration: .init(
                baseURL: root + "/chartboost", appID: "cb_app_demo", appSignature: "cb_sig_demo_secret"),
            http: http)
        let appOpen = AppOpenNetwork(configuration: .init(baseURL: root + "/appopen"), http: http)
        let mediator = try Mediator(
            networks: [chartboost, appOpen],
            configuration: MediationConfiguration(placements: [
                "banner": PlacementConfiguration(
                    format: .banner(.standard), lines: [WaterfallLine(network: "chartboost", placement: "idle")]),
                "app_open": PlacementConfiguration(
                    format: .appOpen, lines: [WaterfallLine(network: "appopen", placement: AppOpenNetwork.testAdUnitID)]
                ),
            ]), logger: quiet)
        let banner = BannerRefreshController(
            network: mediator, request: AdRequest(placement: "banner", format: .banner(.standard)),
            policy: BannerRefreshPolicy(interval: .seconds(30)))
        let manager = AppOpenAdManager(network: mediator, adUnit: "app_open")
        await manager.loadAd()
        await banner.start()
        await banner.waitForLoad()
        guard await manager.isAdAvailable, await banner.currentAd != nil else {
            throw BenchError("the banner or the app-open ad did not load")
        }
        try await Task.sleep(for: .seconds(5))  // settle
        let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))
        var previous = sampleThreads()
        var previousCPU = cpuMicros()
        var perMinute: [[Int: (name: String, wakeups: Int, involuntary: Int, cpuMs: Double)]] = []
        var processCPU: [Double] = []
        for _ in 0..<minutes {
            try await Task.sleep(for: .seconds(60))
            let now = sampleThreads()
            let cpu = cpuMicros()
            var minute: [Int: (name: String, wakeups: Int, involuntary: Int, cpuMs: Double)] = [:]
            for (tid, sample) in now {
                let before = previous[tid] ?? ThreadSample(name: sample.name, voluntary: 0, involuntary: 0, ticks: 0)
                minute[tid] = (
                    sample.name, sample.voluntary - before.voluntary, sample.involuntary - before.involuntary,
                    Double(sample.ticks - before.ticks) / ticksPerSecond * 1000
                )
            }
            perMinute.append(minute)
            processCPU.append((cpu - previousCPU) / 1000)
            previous = now
            previousCPU = cpu
        }
        let shown = await banner.history.filter { if case .shown = $0 { return true } else { return false } }.count
        await banner.stop()
        await manager.shutdown()
        await http.shutdown()
        // Per thread: wake-ups and CPU per minute, mean over the minutes (threads that lived in every minute).
        let tids = Set(perMinute.flatMap(\.keys)).sorted()
        var rows: [(name: String, tid: Int, wakeups: Double, involuntary: Double, cpuMs: Double)] = []
        for tid in tids {
            let minutesSeen = perMinute.compactMap { $0[tid] }
            guard let name = minutesSeen.first?.name else { continue }
            let n = Double(minutesSeen.count)
            rows.append(
                (
                    name, tid, Double(minutesSeen.map(\.wakeups).reduce(0, +)) / n,
                    Double(minutesSeen.map(\.involuntary).reduce(0, +)) / n, minutesSeen.map(\.cpuMs).reduce(0, +) / n
                ))
        }
        rows.sort { $0.wakeups > $1.wakeups }
        let meanCPU = processCPU.reduce(0, +) / Double(max(1, processCPU.count))
        if json {
            let object: [String: Any] = [
                "minutes": minutes, "cpu_ms_per_minute": meanCPU, "banners_shown": shown,
                "threads": rows.map {
                    ["name": $0.name, "wakeups_per_minute": $0.wakeups, "cpu_ms_per_minute": $0.cpuMs] as [String: Any]
                },
            ]
            print(String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self))
            return
        }
        print(
            "\(minutes) idle minutes (real time), banner refresh 30 s, \(shown) banners shown in all; process CPU "
                + "\(fixed(meanCPU)) ms per minute (per minute: "
                + "\(processCPU.map { fixed($0) }.joined(separator: ", ")))"
        )
        print("")
        print("| thread | wake-ups/min (voluntary switches) | involuntary/min | CPU ms/min |")
        print("|---|---|---|---|")
        for row in rows where row.wakeups > 0 || row.cpuMs > 0 {
            print(
                "| \(row.name) (\(row.tid)) | \(fixed(row.wakeups)) | \(fixed(row.involuntary)) | \(fixed(row.cpuMs)) |"
            )
        }
        let silent = rows.filter { $0.wakeups == 0 && $0.cpuMs == 0 }.count
        print("| \(silent) other threads | 0 | | 0 |")
    }
}

// `app-bench session [cycles] [--svg FILE]`: load → show → click → dismiss cycles across the four formats (banner from
// Chartboost, interstitial from GrowthCat, app-open, MARS tile) through one Mediator against the sandbox (in a child
// process), sampling resident memory, open descriptors, the transport's handles and the SQLite files every tenth.
import AdMediation
import AdStorage
import AppOpenAds
import ChartboostBanners
import CurlTransport
import Foundation
import GrowthCatAds
import Logging
import MARSAds

enum SessionBench {
    struct Sample {
        var cycle: Int
        var rssKB: Int
        var fds: Int
        var liveHandles: Int
        var activeTransfers: Int
        var idleHandles: Int
        var growthcatBytes: Int
        var marsBytes: Int
        var marsRows: Int
        var threads: Int
        /// GrowthCat's events stored and not yet delivered (its public `pendingEventCount`).
        var growthcatPending: Int
        /// Bytes malloc has handed out and not had back, and what it holds from the system, in KiB (-1: unknown).
        var mallocInUseKB: Int
        var mallocHeldKB: Int
    }

    /// glibc's `malloc_stats()` totals over every arena: (in use, held from the system) in KiB; (-1, -1) where it is
    /// not there. In use flat while the resident size grows means the growth is the allocator's (arenas,
    /// fragmentation), not a leak. `malloc_stats` prints to stderr, so stderr goes to a pipe for the call (a few
    /// lines per arena, far below a pipe's buffer).
    static func mallocKB() -> (inUse: Int, held: Int) {
        guard let symbol = dlsym(nil, "malloc_stats") else { return (-1, -1) }
        let stats = unsafeBitCast(symbol, to: (@convention(c) () -> Void).self)
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { return (-1, -1) }
        fflush(nil)
        let saved = dup(2)
        dup2(ends[1], 2)
        stats()
        fflush(nil)
        dup2(saved, 2)
        close(saved)
        close(ends[1])
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(ends[0], &buffer, buffer.count)
            if count <= 0 { break }
            bytes += buffer[0..<count]
        }
        close(ends[0])
        // "Total (incl. mmap):\nsystem bytes     =    1234\nin use bytes     =    567"
        let text = String(decoding: bytes, as: UTF8.self)
        guard let total = text.range(of: "Total (incl. mmap):") else { return (-1, -1) }
        func value(_ label: String) -> Int {
            guard let line = text[total.upperBound...].split(separator: "\n").first(where: { $0.hasPrefix(label) }),
                let number = line.split(separator: "=").last.flatMap({ Int($0.trimmingCharacters(in: .whitespaces)) })
            else { return -1 }
            return number / 1024
        }
        return (value("in use bytes"), value("system bytes"))
    }

    /// Resident set size in KiB (/proc/self/statm, pages × page size).
    static func rssKB() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE))) / 1024
    }

    static func entries(_ path: String) -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: path).count) ?? 0
    }

    /// The bytes of a SQLite database with its WAL and shared-memory files.
    static func sqliteBytes(_ path: String) -> Int {
        [path, path + "-wal", path + "-shm"].reduce(0) { total, file in
            let size = (try? FileManager.default.attributesOfItem(atPath: file)[.size] as? Int) ?? 0
            return total + size
        }
    }

    static func run(cycles: Int, svg: String?, json: Bool) async throws {
        let (child, root) = try startSandboxChild()
        defer { child.kill() }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("app-bench-session-\(getpid())")
            .path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let quiet = Logger(label: "bench", factory: { _ in SwiftLogNoOpLogHandler() })
        let http = CurlHTTPClient(logger: quiet)
        var gcConfiguration = GrowthCatClient.Configuration(
            apiKey: "gc_test_demo", baseURL: root + "/growthcat", eventQueuePath: directory + "/gc.sqlite")
        gcConfiguration.logger = quiet
        let gcClient = try GrowthCatClient(configuration: gcConfiguration, http: http)
        let marsPath = directory + "/mars.sqlite"
        let networks: [any AdNetwork] = [
            GrowthCatNetwork(client: gcClient),
            ChartboostNetwork(
                configuration: .init(
                    baseURL: root + "/chartboost", appID: "cb_app_demo", appSignature: "cb_sig_demo_secret"),
                http: http),
            AppOpenNetwork(configuration: .init(baseURL: root + "/appopen"), http: http),
            MarsNetwork(
                client: MozAdsClientBuilder(httpClient: http).environment(.custom(baseURL: root + "/mars/v1/"))
                    .cacheConfig(MozAdsCacheConfig(dbPath: marsPath)).build()),
        ]
        let mediator = try Mediator(
            networks: networks,
            configuration: MediationConfiguration(placements: [
                "banner": PlacementConfiguration(
                    format: .banner(.standard), lines: [WaterfallLine(network: "chartboost", placement: "session")]),
                "interstitial": PlacementConfiguration(
                    format: .interstitial, lines: [WaterfallLine(network: "growthcat", placement: "install_offer")]),
                "app_open": PlacementConfiguration(
                    format: .appOpen, lines: [WaterfallLine(network: "appopen", placement: AppOpenNetwork.testAdUnitID)]
                ),
                "tile": PlacementConfiguration(
                    format: .tile, lines: [WaterfallLine(network: "mars", placement: "mock_tile_1")]),
            ]), logger: quiet)
        let formats: [(String, AdFormat)] = [
            ("banner", .banner(.standard)), ("interstitial", .interstitial), ("app_open", .appOpen), ("tile", .tile),
        ]
        var fills: [String: Int] = [:]
        var failures: [String: Int] = [:]
        /// One cycle: load, impression, click, close (full-screen formats), then the ad is let go.
        @Sendable func cycle(_ i: Int) async -> (String, Bool) {
            let (placement, format) = formats[i % formats.count]
            guard case .filled(let ad)? = try? await mediator.load(AdRequest(placement: placement, format: format))
            else { return (placement, false) }
            _ = try? await ad.report(.impression)
            _ = try? await ad.report(.click)
            if format == .interstitial || format == .appOpen { _ = try? await ad.report(.closed) }
            ad.invalidate()
            return (placement, true)
        }
        let warmUp = max(400, cycles / 10)
        for i in 0..<warmUp { _ = await cycle(i) }
        let marsStore = try HTTPCacheStore(path: marsPath)
        func sample(_ i: Int) async -> Sample {
            let statistics = http.statistics
            let malloc = mallocKB()
            return Sample(
                cycle: i, rssKB: rssKB(), fds: entries("/proc/self/fd"), liveHandles: statistics.liveHandles,
                activeTransfers: statistics.activeTransfers, idleHandles: statistics.idleHandles,
                growthcatBytes: sqliteBytes(directory + "/gc.sqlite"), marsBytes: sqliteBytes(marsPath),
                marsRows: (try? await marsStore.count()) ?? -1, threads: entries("/proc/self/task"),
                growthcatPending: await gcClient.pendingEventCount, mallocInUseKB: malloc.inUse,
                mallocHeldKB: malloc.held)
        }
        var samples = [await sample(0)]
        let step = max(1, cycles / 10)
        let start = ContinuousClock.now
        for i in 0..<cycles {
            let (placement, filled) = await Task.detached { await cycle(i) }.value
            if filled { fills[placement, default: 0] += 1 } else { failures[placement, default: 0] += 1 }
            if (i + 1) % step == 0 { samples.append(await sample(i + 1)) }
        }
        let seconds = (ContinuousClock.now - start).ms / 1000
        // After the session: GrowthCat's queue is flushed (what its 30 s batch timer would do), then every count
        // should be back at its baseline: the last row.
        _ = await gcClient.flushAdEvents()
        var end = await sample(cycles)
        end.cycle = -1
        samples.append(end)
        await gcClient.shutdown()
        if let svg { try chart(samples).write(toFile: svg, atomically: true, encoding: .utf8) }
        let cycled = samples.filter { $0.cycle >= 0 }
        let growth = (cycled.last?.rssKB ?? 0) - (cycled.dropFirst().first?.rssKB ?? 0)
        if json {
            let rows = samples.map {
                [
                    "cycle": $0.cycle, "rss_kb": $0.rssKB, "fds": $0.fds, "curl_live": $0.liveHandles,
                    "curl_idle": $0.idleHandles, "growthcat_bytes": $0.growthcatBytes, "mars_bytes": $0.marsBytes,
                    "mars_rows": $0.marsRows, "threads": $0.threads, "growthcat_pending": $0.growthcatPending,
                    "malloc_in_use_kb": $0.mallocInUseKB, "malloc_held_kb": $0.mallocHeldKB,
                ]
            }
            let object: [String: Any] = ["cycles": cycles, "rss_growth_kb": growth, "samples": rows]
            print(String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self))
            return
        }
        print(
            "\(cycles) cycles after \(warmUp) warm-up cycles, \(fixed(seconds)) s "
                + "(\(fixed(Double(cycles) / seconds, 0)) cycles/s); fills \(fills.sorted { $0.key < $1.key }), "
                + "not filled \(failures.sorted { $0.key < $1.key })"
        )
        print("")
        print(
            "| cycle | RSS MiB | malloc in use / held MiB | open fds | threads | curl handles live / in multi / idle "
                + "| GrowthCat pending events | GrowthCat queue KiB | MARS cache KiB | MARS rows |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for s in samples {
            let cycle = s.cycle < 0 ? "end, flushed" : String(s.cycle)
            print(
                "| \(cycle) | \(fixed(Double(s.rssKB) / 1024, 2)) | \(fixed(Double(s.mallocInUseKB) / 1024, 2)) / "
                    + "\(fixed(Double(s.mallocHeldKB) / 1024, 2)) | \(s.fds) | "
                    + "\(s.threads) | \(s.liveHandles) / \(s.activeTransfers) / \(s.idleHandles) | "
                    + "\(s.growthcatPending) | \(s.growthcatBytes / 1024) | \(s.marsBytes / 1024) | \(s.marsRows) |")
        }
        print("")
        print("RSS growth from the first tenth to the end: \(growth) KiB (goal < 1024 KiB)")
    }

    /// Three stacked line charts (RSS, open descriptors, SQLite bytes) over the cycles, as a standalone SVG.
    static func chart(_ samples: [Sample]) -> String {
        let width = 640.0, panel = 150.0, left = 70.0, right = 20.0, top = 30.0, gap = 40.0
        let samples = samples.filter { $0.cycle >= 0 }
        let maxCycle = Double(max(1, samples.last?.cycle ?? 1))
        let series: [(String, String, [Double])] = [
            ("resident memory, MiB", "#1f77b4", samples.map { Double($0.rssKB) / 1024 }),
            ("open file descriptors", "#d62728", samples.map { Double($0.fds) }),
            (
                "SQLite files (GrowthCat queue + MARS cache), KiB", "#2ca02c",
                samples.map { Double($0.growthcatBytes + $0.marsBytes) / 1024 }
            ),
        ]
        let height = top + Double(series.count) * (panel + gap)
        var svg = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" \
            font-family="sans-serif" font-size="11">
            <rect width="100%" height="100%" fill="white"/>
            <text x="\(Int(left))" y="18" font-size="13">Long session: \(Int(maxCycle)) load → show → click → \
            dismiss cycles (x: cycle)</text>

            """
        for (index, (title, color, values)) in series.enumerated() {
            let y0 = top + Double(index) * (panel + gap) + 14
            let low = min(0, values.min() ?? 0), high = max((values.max() ?? 1) * 1.1, low + 1)
            func x(_ cycle: Int) -> Double { left + Double(cycle) / maxCycle * (width - left - right) }
            func y(_ value: Double) -> Double { y0 + panel - (value - low) / (high - low) * panel }
            svg += "<text x=\"\(Int(left))\" y=\"\(Int(y0 - 4))\">\(title)</text>\n"
            svg += "<rect x=\"\(Int(left))\" y=\"\(Int(y0))\" width=\"\(Int(width - left - right))\" "
            svg += "height=\"\(Int(panel))\" fill=\"none\" stroke=\"#999\"/>\n"
            for tick in [low, (low + high) / 2, high] {
                svg += "<text x=\"\(Int(left - 6))\" y=\"\(Int(y(tick) + 4))\" text-anchor=\"end\">"
                svg += "\(fixed(tick, high - low < 10 ? 1 : 0))</text>\n"
            }
            svg += "<text x=\"\(Int(left))\" y=\"\(Int(y0 + panel + 14))\">0</text>\n"
            svg += "<text x=\"\(Int(width - right))\" y=\"\(Int(y0 + panel + 14))\" text-anchor=\"end\">"
            svg += "\(Int(maxCycle))</text>\n"
            let points = zip(samples, values).map { "\(fixed(x($0.cycle), 1)),\(fixed(y($1), 1))" }
            svg += "<polyline fill=\"none\" stroke=\"\(color)\" stroke-width=\"2\" points=\""
            svg += points.joined(separator: " ") + "\"/>\n"
        }
        return svg + "</svg>\n"
    }
}

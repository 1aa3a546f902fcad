// `app-bench check [baselines.json]` (`make bench-check`): a quick subset of the benchmarks compared with the committed
// baselines (Benchmarks/baselines.json), as ratios with a tolerance: the transport's CPU per request over
// AsyncHTTPClient's in the same run, the mediator's overhead per line, and `mediate compare` at 100 016 requests.
// Exits 1 when a figure regressed past its baseline or missed its goal beyond the tolerance. Not run in CI.
import Foundation

enum CheckBench {
    /// One check of the baselines file.
    struct Check: Codable {
        /// The issue's goal (the figure must stay at or under it).
        var goal: Double
        /// The figure committed from a run on the reference machine.
        var baseline: Double
        /// Allowed noise, as a fraction (0.25: 25 % over the baseline or the goal still passes).
        var tolerance: Double
        /// What the figure is.
        var what: String
    }

    /// Runs `executable` from the build folder and parses the last stdout line as JSON.
    static func json(_ executable: String, _ arguments: [String], environment: [String: String]? = nil) throws
        -> [String: Any]
    {
        let child = try Child(arguments, executable: executable, environment: environment)
        let output = child.output()
        let line = output.split(separator: "\n").last.map(String.init) ?? ""
        guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
            throw BenchError("\(executable) \(arguments.joined(separator: " ")) printed no JSON: \(output.suffix(300))")
        }
        return object
    }

    static func number(_ object: [String: Any], _ path: String...) -> Double? {
        var current: Any? = object
        for key in path { current = (current as? [String: Any])?[key] }
        return (current as? NSNumber)?.doubleValue
    }

    static func median(_ values: [Double]) -> Double { percentile(values, 0.5) }

    static func run(baselinesPath: String) async throws {
        let baselines = try JSONDecoder().decode(
            [String: Check].self, from: Data(contentsOf: URL(fileURLWithPath: baselinesPath)))
        var measured: [String: Double] = [:]
        // 1. Transport: client CPU per request at c=8, CurlHTTPClient over AsyncHTTPClient measured right after it
        // (each alone, `BENCH_ONLY`), median of three pairs.
        var ratios: [Double] = []
        for run in 1...3 {
            progress("bench-check: transport-bench 2000 --json (\(run)/3)")
            let curl = try json("transport-bench", ["2000", "--json"], environment: ["BENCH_ONLY": "CurlHTTPClient"])
            let ahc = try json("transport-bench", ["2000", "--json"], environment: ["BENCH_ONLY": "AsyncHTTPClient"])
            guard let c = number(curl, "CurlHTTPClient", "8", "cpu_us_per_request"),
                let a = number(ahc, "AsyncHTTPClient", "8", "cpu_us_per_request"), a > 0
            else { throw BenchError("transport-bench: no c=8 figures") }
            ratios.append(c / a)
        }
        measured["transport_cpu_curl_over_ahc_c8"] = median(ratios)
        // 2. Mediator overhead per line, median of three runs.
        var overheads: [Double] = []
        for run in 1...3 {
            progress("bench-check: mediator-bench 40000 --overhead-only (\(run)/3)")
            let child = try Child(["40000", "--overhead-only"], executable: "mediator-bench")
            guard let value = Double(child.output().trimmingCharacters(in: .whitespacesAndNewlines)) else {
                throw BenchError("mediator-bench printed no figure")
            }
            overheads.append(value)
        }
        measured["mediator_overhead_us_per_line"] = median(overheads)
        // 3. `mediate compare`, built-in demo, 5264 requests per source (100 016 in all), concurrency 256: wall time.
        progress("bench-check: mediate compare --requests 5264 --concurrency 256 (about half a minute)")
        let start = ContinuousClock.now
        let compare = try Child(
            ["compare", "--requests", "5264", "--concurrency", "256", "--format", "json", "--quiet"],
            executable: "mediate")
        _ = compare.output()
        guard compare.process.terminationStatus == 0 else {
            throw BenchError("mediate compare exited \(compare.process.terminationStatus)")
        }
        measured["compare_100k_wall_s"] = (ContinuousClock.now - start).ms / 1000
        // Verdicts.
        var failed = false
        print("| check | measured | baseline | measured ÷ baseline | goal | tolerance | verdict |")
        print("|---|---|---|---|---|---|---|")
        for (name, check) in baselines.sorted(by: { $0.key < $1.key }) {
            guard let value = measured[name] else {
                print("| \(name) | not measured | | | | | **unknown check** |")
                failed = true
                continue
            }
            var verdict = "ok"
            if value > check.baseline * (1 + check.tolerance) {
                verdict = "**regressed**"
            } else if value > check.goal * (1 + check.tolerance) {
                verdict = "**goal missed**"
            }
            if verdict != "ok" { failed = true }
            print(
                "| \(check.what) | \(fixed(value, 3)) | \(fixed(check.baseline, 3)) | "
                    + "\(fixed(value / check.baseline, 2))× "
                    + "| ≤ \(fixed(check.goal, 2)) | \(Int(check.tolerance * 100)) % | \(verdict) |")
        }
        print("")
        print(
            "transport ratios \(ratios.map { fixed($0, 3) }.joined(separator: ", ")); mediator µs/line "
                + overheads.map { fixed($0, 2) }.joined(separator: ", "))
        if failed { exit(1) }
    }
}

// What an app feels: hung partners, start-up, idle cost, a long session (docs/BENCHMARKS.md, issue 36).
// Usage: app-bench hung [auctions] [--json]
//        app-bench startup [cold-starts] [--json]
//        app-bench startup-profile [runs]         (the GrowthCat lap of the start-up, by decomposition)
//        app-bench idle [minutes] [--json]
//        app-bench session [cycles] [--svg FILE] [--json]
//        app-bench flood [auctions] [--json]      (one bidder's huge answers beside a good line, issue 45)
//        app-bench check [baselines.json]          (`make bench-check`)
//        app-bench serve                          (the sandbox child the others start)
import Foundation

let arguments = Array(CommandLine.arguments.dropFirst())
let json = arguments.contains("--json")
let positional = arguments.filter { !$0.hasPrefix("--") }
let mode = positional.first ?? ""
let count = positional.dropFirst().first.flatMap { Int($0) }

switch mode {
case "serve":
    try await serveSandbox()
case "startup":
    try await StartupBench.run(runs: count ?? 200, json: json)
case "startup-child":
    try await StartupBench.child(Array(positional.dropFirst()))
case "startup-profile":
    try StartupProfile.run(runs: count ?? 100)
case "startup-profile-child":
    try StartupProfile.child(Array(positional.dropFirst()))
case "idle":
    try await IdleBench.run(minutes: count ?? 3, json: json)
case "session":
    let svg = arguments.firstIndex(of: "--svg").flatMap { arguments.indices.contains($0 + 1) ? arguments[$0 + 1] : nil }
    let numbers = positional.dropFirst().filter { Int($0) != nil }
    try await SessionBench.run(cycles: numbers.first.flatMap { Int($0) } ?? 10_000, svg: svg, json: json)
case "check":
    try await CheckBench.run(baselinesPath: positional.dropFirst().first ?? "baselines.json")
case "hung":
    try await HungBench.run(auctions: count ?? 100, json: json)
case "flood":
    try await FloodBench.run(auctions: count ?? 100, json: json)
default:
    FileHandle.standardError.write(Data("usage: app-bench hung|flood|startup|idle|session [count] [--json]\n".utf8))
    exit(2)
}

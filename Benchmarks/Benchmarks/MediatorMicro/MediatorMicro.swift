// Micro-benchmarks on ordo-one's package-benchmark, for what it measures better than the executables next to it:
// allocations per operation (its malloc interposer) and a regression check between two builds.
//
//   cd Benchmarks
//   swift package benchmark --target MediatorMicro      # run and print
//   swift package --allow-writing-to-package-directory benchmark baseline update main --target MediatorMicro
//   (change the code, then)
//   swift package benchmark baseline check main --target MediatorMicro --metric mallocCountTotal   # exit 1 if worse
import AdMediation
import BenchSupport
import Benchmark
import Logging

let benchmarks: @Sendable () -> Void = {
    let lineCount = 4
    let networks = (0..<lineCount).map { InstantNetwork(id: "n\($0)", fills: $0 == lineCount - 1) }
    let request = AdRequest(placement: "p", format: .interstitial)
    let quiet = Logger(label: "admediation.mediator", factory: { _ in SwiftLogNoOpLogHandler() })
    let configuration = MediationConfiguration(placements: [
        "p": PlacementConfiguration(
            format: .interstitial, lines: (0..<lineCount).map { WaterfallLine(network: "n\($0)", placement: "x") })
    ])
    // Allocations hardly vary between runs, so their tolerance is small; wall-clock time moves with the machine, so it
    // is only reported (per-iteration CPU time is below getrusage's resolution here).
    let mallocTolerance = BenchmarkThresholds(relative: [.p50: 10.0], absolute: [.p50: 3])
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .mallocCountTotal], timeUnits: .microseconds, warmupIterations: 1000,
        maxDuration: .seconds(3), maxIterations: 100_000, thresholds: [.mallocCountTotal: mallocTolerance])

    Benchmark("Four instant networks, called directly") { benchmark in
        for _ in benchmark.scaledIterations {
            for network in networks { blackHole(try await network.load(request)) }
        }
    }

    do {
        let mediator = try Mediator(networks: networks, configuration: configuration, logger: quiet)
        Benchmark("Mediator, one request of four instant lines (the last fills)") { benchmark in
            for _ in benchmark.scaledIterations { blackHole(try await mediator.load(request)) }
        }
    } catch {
        print("MediatorMicro: the mediator could not be built, so it is not measured: \(error)")
    }
}

import Testing

@testable import mediate

/// Issue 47 item 2: the live progress line says the whole run's ETA (a 20 000-request run took ~30 min
/// unannounced), from the run's rate so far over every phase. The run's start is given, so no test waits.
@Suite("compare: the run's ETA")
struct RunETATests {
    static let start = ContinuousClock.now

    @Test func theETAIsTheRequestsLeftAtTheRunsRateSoFar() {
        let run = RunProgress(planned: 100, start: Self.start)
        for _ in 0..<25 { run.tick() }
        // 25 requests in 10 s: 2.5 a second, 75 left.
        #expect(run.eta(now: Self.start + .seconds(10)) == "run ETA 30 s")
    }

    @Test func everyPhaseCountsTowardsTheRunsETA() {
        let run = RunProgress(planned: 4000, start: Self.start)
        let quiet = Progress(enabled: false)
        let waterfall = ProgressCounter(total: 2000, label: "home (waterfall)", progress: quiet, run: run)
        let line = ProgressCounter(total: 2000, label: "home → ao/x", progress: quiet, run: run)
        for _ in 0..<1000 { waterfall.tick() }
        for _ in 0..<200 { line.tick() }
        // 1 200 requests in 60 s: 20 a second, 2 800 left.
        #expect(run.eta(now: Self.start + .seconds(60)) == "run ETA 2 min 20 s")
    }

    @Test func thereIsNoETABeforeTheFirstRequestNorAtTheEnd() {
        let run = RunProgress(planned: 2, start: Self.start)
        #expect(run.eta(now: Self.start + .seconds(5)) == nil, "no rate yet")
        run.tick()
        #expect(run.eta(now: Self.start + .seconds(5)) == "run ETA 5 s")
        run.tick()
        #expect(run.eta(now: Self.start + .seconds(10)) == nil, "the run is over")
    }
}

import Testing

@testable import mediate

/// Issue 45: `compare` kept a ~190 KB latency histogram per source whatever `--requests` was (990 placements × 9
/// lines with `--requests 1` took 1.78 GB). A source's state is sized to its run: a short run's latencies stay in a
/// plain list, and only a long one holds a histogram.
@Suite("compare: per-source state sized to the run")
struct CompareMemoryTests {
    /// A source measured as `compare` measures it: a worker's tally merged into the source's.
    static func source(requests: Int) -> Tally {
        var worker = Tally()
        for index in 0..<requests {
            worker.record(latency: .microseconds(1000 + index), second: 0, Sample(nil))
        }
        var merged = Tally()
        merged.merge(worker)
        return merged
    }

    @Test func aSourceOfAOneRequestRunHoldsNoHistogram() {
        let tally = Self.source(requests: 1)
        #expect(tally.histogramCount == 0)
        #expect(tally.listedCount == 1)
        #expect(tally.percentileMs(50) == 1)
    }

    @Test func aSourceOfALongRunHoldsOneHistogramAndNoList() {
        let tally = Self.source(requests: Tally.listedLatencies + 1)
        #expect(tally.histogramCount == 1)
        #expect(tally.listedCount == 0)
    }

    @Test func percentilesFromTheListRankAsTheHistogramDoes() {
        let tally = Self.source(requests: 1000)
        #expect(tally.percentileMs(50) == 1.499)
        #expect(tally.percentileMs(0) == 1 && tally.percentileMs(100) == 1.999)
    }
}

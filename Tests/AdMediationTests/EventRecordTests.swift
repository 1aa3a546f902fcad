import AdMediation
import Testing

/// The per-ad record every format reports through (``LoadedAd``): banners, tiles and app-open ads count a click only
/// on an ad that was seen.
@Suite("LoadedAd: one event record per ad")
struct EventRecordTests {
    final class Recorder: AdEventReporter {
        let sent = LockedValue<[AdEvent]>([])
        func deliver(_ record: AdEventRecord) async throws -> AdEventDelivery {
            sent.withLock { $0.append(record.event) }
            return .delivered
        }
    }

    func ad(_ recorder: Recorder) -> LoadedAd {
        LoadedAd(
            networkID: "n", placement: "p", format: .tile, creative: AdCreative(id: "c", kind: "image"),
            loadedAt: AdInstant(nanoseconds: 0), reporter: recorder)
    }

    @Test func aClickBeforeTheImpressionIsRefusedAndNothingIsSent() async {
        let recorder = Recorder()
        let loaded = ad(recorder)
        await #expect(throws: AdError.self) { try await loaded.report(.click) }
        await #expect(throws: AdError.self) { try await loaded.deliver(.click, repeating: true) }
        #expect(recorder.sent.withLock { $0 }.isEmpty)
        #expect(!loaded.reportedEvents.contains(.click), "a refused click does not count as reported")
    }

    @Test func aClickAfterTheImpressionIsSentOnce() async throws {
        let recorder = Recorder()
        let loaded = ad(recorder)
        try await loaded.report(.impression)
        #expect(try await loaded.report(.click))
        #expect(try await loaded.report(.click) == false)
        #expect(recorder.sent.withLock { $0 } == [.impression, .click])
    }
}

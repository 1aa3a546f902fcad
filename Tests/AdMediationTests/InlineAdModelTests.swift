import AdMediation
import Foundation
import Testing

/// A model-based test of what a banner slot or a tile reports through its ads' event records (``LoadedAd``), against a
/// reference model of the rules written from the seeds: a refresh replaces the ad on screen (the old one is released:
/// nothing more is reported for it); an impression when an ad renders, once; a click only on an ad that was seen (its
/// impression reported or attempted: a failed delivery never blocks the clicks), once per ad (or once per tap where
/// the network counts taps), attributed to the ad that was tapped — a tap that reaches an ad already replaced reports
/// nothing; a report that fails counts as not reported (it may be retried).
@Suite("Banner and tile event records against a reference model")
struct InlineAdModelTests {
    final class Recorder: AdEventReporter {
        let sent = LockedValue<[(String, AdEvent)]>([])
        let failNext = LockedValue(false)
        func deliver(_ record: AdEventRecord) async throws -> AdEventDelivery {
            let (event, ad) = (record.event, record.ad)
            let fail = failNext.withLock { flag in
                defer { flag = false }
                return flag
            }
            if fail {
                throw AdError(.network, "tracking down")
            }
            sent.withLock { $0.append((ad.creative.id, event)) }
            return .delivered
        }
    }

    struct ModelAd {
        /// The ad was seen: its impression was reported, or its report attempted (what the user saw is local truth:
        /// a failed delivery, which may be retried, never blocks the clicks — issue 42).
        var seen = false
        var impression = false
        var clicked = false
        var released = false
    }

    /// 5 000 sequences by default; `MODEL_RUNS=N` for a long run.
    @Test func theEventRecordsAgreeWithTheReferenceModelOnSeededRandomSequences() async {
        let runs = ProcessInfo.processInfo.environment["MODEL_RUNS"].flatMap { Int($0) }.map { max(1, $0) } ?? 5000
        var steps = 0, events = 0, refused = 0, divergent = 0
        for seed in 0..<UInt64(runs) {
            var random = SplitMix64(seed: seed &* 0xD1B5_4A32_D192_ED03 &+ 3)
            let recorder = Recorder()
            let eachTap = random.next() % 3 == 0
            var ads: [LoadedAd] = []
            var model: [ModelAd] = []
            var expected: [(String, AdEvent)] = []
            for _ in 0..<40 {
                steps += 1
                let onScreen = ads.indices.last
                switch random.next() % 6 {
                case 0:  // refresh: a new ad replaces the one on screen
                    if let old = onScreen {
                        ads[old].invalidate()
                        model[old].released = true
                    }
                    ads.append(
                        LoadedAd(
                            networkID: "n", placement: "slot", format: .tile,
                            creative: AdCreative(id: "ad\(ads.count)", kind: "image"), loadedAt: .zero,
                            reporter: recorder))
                    model.append(ModelAd())
                case 1:  // the ad on screen rendered
                    guard let i = onScreen else { break }
                    let ok = (try? await ads[i].report(.impression)) != nil
                    if !model[i].released { model[i].seen = true }
                    if !model[i].released, !model[i].impression, ok {
                        model[i].impression = true
                        expected.append((ads[i].creative.id, .impression))
                    }
                case 2, 3:  // a tap, on the ad on screen or (a late tap) on one shown earlier
                    guard !ads.isEmpty else { break }
                    let i = random.next() % 4 == 0 ? Int(random.next() % UInt64(ads.count)) : ads.count - 1
                    let delivered = (try? await ads[i].deliver(.click, repeating: eachTap)) ?? .alreadyReported
                    if !model[i].released, model[i].seen, eachTap || !model[i].clicked {
                        model[i].clicked = true
                        expected.append((ads[i].creative.id, .click))
                    } else {
                        refused += 1
                        if delivered != .alreadyReported, !(model[i].released || !model[i].seen) {
                            Issue.record("seed \(seed): a repeated click was delivered as \(delivered)")
                        }
                    }
                case 4:  // the next report fails (nothing counted: it may be retried)
                    recorder.failNext.withLock { $0 = true }
                    guard let i = onScreen else { break }
                    _ = try? await ads[i].report(.impression)
                    if !model[i].released { model[i].seen = true }
                default:  // the slot is released
                    if let i = onScreen {
                        ads[i].invalidate()
                        model[i].released = true
                    }
                }
                recorder.failNext.withLock { $0 = false }
            }
            let seen = recorder.sent.withLock { $0 }
            events += seen.count
            if !(seen.count == expected.count && zip(seen, expected).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }) {
                Issue.record("seed \(seed): reported \(seen), the model expects \(expected)")
                divergent += 1
                if divergent >= 3 { break }
            }
        }
        print(
            "inline model: \(runs) sequences, \(steps) steps, \(events) events, \(refused) taps that earned nothing; "
                + "\(divergent) divergent")
        #expect(divergent == 0)
        #expect(events > 0 && refused > 0, "the sequences reached the rules they check")
    }
}

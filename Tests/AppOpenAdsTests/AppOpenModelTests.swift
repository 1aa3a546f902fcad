import AdMediation
import AdMediationTesting
import AdPresentation
import AppOpenAds
import Foundation
import Testing

/// A model-based test of the app-open manager's events, against a reference model written from the seed's rules (not
/// from the manager): an ad is handed to the app only when one is loaded, unexpired (`min(TTL, 4 h)` from its load)
/// and nothing else shows; its impression is counted when the app says it is on screen, once; a click only after
/// that impression, one per tap (the spec's "`click` once per click"); `ad_closed` once at a dismissal of a seen
/// ad; nothing for an ad that failed to present, nothing after its dismissal, nothing for an ad never handed over.
@Suite("App-open manager against a reference model", .timeLimit(.minutes(3)))
struct AppOpenModelTests {
    enum Action: CaseIterable {
        case foreground, background, becomeActive, present, click, dismiss, failToPresent, advance, finishLoad
    }

    /// The reference: the showing ad and what it has earned; the events the network must have seen, in order.
    struct Model {
        var showing: String?
        var impression = false
        var clicked = false
        var expected: [(String, AdEvent)] = []

        mutating func handedOver(_ id: String) {
            showing = id
            impression = false
            clicked = false
        }
        mutating func present() {
            guard let id = showing, !impression else { return }
            impression = true
            expected.append((id, .impression))
        }
        mutating func click() {
            guard let id = showing, impression else { return }
            clicked = true
            expected.append((id, .click))
        }
        mutating func dismiss() {
            guard let id = showing else { return }
            if impression { expected.append((id, .closed)) }
            showing = nil
        }
        mutating func fail() { showing = nil }
    }

    struct Counts {
        var sequences = 0, steps = 0, events = 0, shows = 0, checks = 0
    }

    /// 1 000 sequences of 60 steps by default; `MODEL_RUNS=N` for a long run.
    @Test func theManagerAgreesWithTheReferenceModelOnSeededRandomSequences() async {
        let runs = ProcessInfo.processInfo.environment["MODEL_RUNS"].flatMap { Int($0) }.map { max(1, $0) } ?? 1000
        var counts = Counts()
        var divergent = 0
        for seed in 0..<UInt64(runs) {
            if await !run(seed: seed &* 0x9E37_79B9_7F4A_7C15 &+ 7, counts: &counts) { divergent += 1 }
            if divergent >= 3 { break }
        }
        print(
            "app-open model: \(counts.sequences) sequences, \(counts.steps) steps, \(counts.shows) ads shown, "
                + "\(counts.events) events, \(counts.checks) checks; \(divergent) divergent")
        #expect(divergent == 0)
        #expect(counts.events > 0 && counts.shows > 0, "the sequences reached the rules they check")
    }

    func run(seed: UInt64, counts: inout Counts) async -> Bool {
        var random = SplitMix64(seed: seed)
        let clock = ManualAdClock()
        // Fills, no fills and failures, some ads living less than the 4-hour cap.
        let network = ScriptedAdNetwork(id: "n", clock: clock, fallback: .fill(ttl: nil))
        var script: [ScriptedAdNetwork.Step] = []
        for _ in 0..<80 {
            switch random.next() % 6 {
            case 0: script.append(.noFill())
            case 1: script.append(.fail(AdError(.network, "down")))
            case 2: script.append(.fill(ttl: .seconds(3600)))
            default: script.append(.fill(ttl: nil))
            }
        }
        network.setScript(script, for: "unit")
        let manager = AppOpenAdManager(network: network, adUnit: "unit", clock: clock)
        var model = Model()
        var ok = true
        func check(_ condition: Bool, _ message: @autoclosure () -> String) {
            counts.checks += 1
            if !condition {
                if ok { Issue.record("seed \(seed): \(message())") }
                ok = false
            }
        }
        func handOver(_ ad: LoadedAd) {
            counts.shows += 1
            // Seed: "Make sure you check the validity of your ad reference before you try to show the ad": never
            // expired, never past 4 hours.
            let now = clock.now
            check(!ad.isExpired(at: now), "an expired ad \(ad.creative.id) was handed over")
            check(now - ad.loadedAt < .seconds(4 * 3600), "an ad older than 4 hours was handed over")
            check(model.showing == nil, "a second ad was handed over while one showed")
            model.handedOver(ad.creative.id)
        }
        for _ in 0..<60 {
            counts.steps += 1
            let action = Action.allCases[Int(random.next() % UInt64(Action.allCases.count))]
            switch action {
            case .foreground:
                let result = await manager.applicationWillEnterForeground()
                if case .present(let ad) = result { handOver(ad) }
            case .becomeActive:
                let result = await manager.showAdIfAvailable()
                if case .present(let ad) = result { handOver(ad) }
            case .background:
                await manager.applicationDidEnterBackground()
            case .present:
                await manager.adDidPresent()
                model.present()
            case .click:
                await manager.adDidClick()
                model.click()
            case .dismiss:
                await manager.adDidDismiss()
                model.dismiss()
            case .failToPresent:
                await manager.adDidFailToPresent(AdError(.invalidState, "no window"))
                model.fail()
            case .advance:
                await clock.advance(by: .seconds(Int64(random.next() % 3) * 3600 + Int64(random.next() % 600)))
            case .finishLoad:
                await manager.waitForLoad()
            }
            let showing = await manager.isShowingAd
            check(showing == (model.showing != nil), "showing: manager \(showing), model \(model.showing ?? "none")")
            let seen = network.reportedEvents.map { ($0.creative, $0.event) }
            check(
                seen.count == model.expected.count
                    && zip(seen, model.expected).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 },
                "events \(seen) expected \(model.expected) after \(action)")
            if !ok { break }
        }
        await manager.waitForLoad()
        await manager.shutdown()
        counts.sequences += 1
        counts.events += model.expected.count
        return ok
    }
}

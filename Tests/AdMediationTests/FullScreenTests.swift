import AdMediation
import AdMediationTesting
import Testing

/// Rules with a rewarded image: the close button and the reward 15 s after it rendered.
private struct RewardedImageRules: FullScreenRules {
    var grants: AdReward?
    var showsSponsoredLabel: Bool { true }
    var contract: FullScreenContract {
        FullScreenContract(creative: .image, reward: .init(minimumView: .seconds(15)))
    }
    func validateReward(_ claim: RewardClaim) async throws(AdError) -> AdReward? { grants }
}

/// Rules given as a contract, with the claims they were asked to validate.
private final class ContractRules: FullScreenRules {
    let contract: FullScreenContract
    let claims = LockedValue<[RewardClaim]>([])
    init(_ contract: FullScreenContract) { self.contract = contract }
    var showsSponsoredLabel: Bool { true }
    func validateReward(_ claim: RewardClaim) async throws(AdError) -> AdReward? {
        claims.withLock { $0.append(claim) }
        return AdReward(name: "coins", amount: 1)
    }
}

/// Records what reaches the network, answers with `delivery`, and hands out the rules it was given.
private final class RulesReporter: AdEventReporter {
    let rules: (any FullScreenRules)?
    let delivery: @Sendable (AdEvent) -> AdEventDelivery
    let events = LockedValue<[AdEvent]>([])
    init(
        rules: (any FullScreenRules)?, delivery: @escaping @Sendable (AdEvent) -> AdEventDelivery = { _ in .delivered }
    ) {
        self.rules = rules
        self.delivery = delivery
    }
    func deliver(_ record: AdEventRecord) async throws -> AdEventDelivery {
        events.withLock { $0.append(record.event) }
        return delivery(record.event)
    }
}

/// A presenter that runs the test's script of renderer signals and user actions.
struct ScriptedPresenter: FullScreenPresenter {
    let script: @Sendable (FullScreenControls) async -> Void
    func present(_ ad: LoadedAd, controls: FullScreenControls) async { await script(controls) }
}

private func makeAd(
    _ rules: (any FullScreenRules)?, expiresAt: AdInstant? = nil,
    delivery: @escaping @Sendable (AdEvent) -> AdEventDelivery = { _ in .delivered }
) -> (LoadedAd, RulesReporter) {
    let reporter = RulesReporter(rules: rules, delivery: delivery)
    let ad = LoadedAd(
        networkID: "net", placement: "p", format: .rewarded, creative: AdCreative(id: "c1", kind: "video"),
        loadedAt: .zero, expiresAt: expiresAt, reporter: reporter, fullScreenRules: rules)
    return (ad, reporter)
}

@Suite("Full-screen presentation", .timeLimit(.minutes(1)))
struct FullScreenTests {
    @Test func adWithoutRulesSendsImpressionClickAndCloseFromTheRenderersSignals() async throws {
        let (ad, reporter) = makeAd(nil)
        let result = try await ad.presentFullScreen(
            on: ScriptedPresenter { controls in
                await controls.renderBegan()
                await controls.tapped()
                _ = await controls.closeTapped()
            }, clock: ManualAdClock())
        #expect(reporter.events.withLock { $0 } == [.impression, .click, .closed])
        #expect(result.reward == nil)
        #expect(result.log.filter(\.isFailure).isEmpty)
    }

    /// Issue 29 item 2: "an impression is counted for a video that never started" — the impression is the renderer's
    /// "begin to render", never the presentation. (Old API only: fails on the code before the ledger.)
    @Test func anAdThatNeverRendersCountsNoImpression() async throws {
        let clock = ManualAdClock()
        let (ad, reporter) = makeAd(nil)
        let result = try await ad.presentFullScreen(
            on: ScriptedPresenter { controls in
                await clock.advance(to: .zero + .seconds(10))
                await controls.refresh()
            }, clock: clock)
        #expect(reporter.events.withLock { $0 }.isEmpty)
        #expect(result.log.map(\.kind) == [.dismissed])
    }

    /// Issue 29 item 3: the presenter is called at once, and its signals and taps are answered while the network has
    /// not taken a single event yet.
    @Test func thePresenterIsCalledAtOnceAndNeverWaitsForEventReporting() async throws {
        let gate = Gate()
        let presenterCalled = LockedValue(false)
        let reportedBeforePresenter = LockedValue(false)
        let reporter = GatedReporter(gate: gate) {
            if presenterCalled.withLock({ $0 }) { return true }
            reportedBeforePresenter.withLock { $0 = true }
            return false
        }
        let ad = LoadedAd(
            networkID: "net", placement: "p", format: .interstitial, creative: AdCreative(id: "c1", kind: "image"),
            loadedAt: .zero, reporter: reporter)
        let result = try await ad.presentFullScreen(
            on: ScriptedPresenter { controls in
                presenterCalled.withLock { $0 = true }
                await controls.renderBegan()
                await controls.tapped()
                let closed = await controls.closeTapped()
                #expect(closed, "the close is answered while no event has been delivered")
                #expect(reporter.delivered.withLock { $0 }.isEmpty)
                gate.open()
            }, clock: ManualAdClock())
        #expect(
            !reportedBeforePresenter.withLock { $0 }, "an event reached the network before the presenter was called")
        #expect(reporter.delivered.withLock { $0 } == [.impression, .click, .closed])
        #expect(result.log.compactMap { if case .event(let e, _) = $0.kind { e } else { nil } }.count == 3)
    }

    /// Issue 29 item 5: "Clicks are delivered at most once per ad" — unless the network counts each tap.
    @Test func aSecondTapIsAnotherClickOnlyWhereTheContractCountsEachTap() async throws {
        for (clicks, expected) in [(FullScreenContract.Clicks.oncePerAd, 1), (.eachTap, 2)] {
            let (ad, reporter) = makeAd(ContractRules(FullScreenContract(creative: .image, clicks: clicks)))
            _ = try await ad.presentFullScreen(
                on: ScriptedPresenter { controls in
                    await controls.renderBegan()
                    await controls.tapped()
                    await controls.tapped()
                    _ = await controls.closeTapped()
                }, clock: ManualAdClock())
            #expect(reporter.events.withLock { $0 }.filter { $0 == .click }.count == expected)
        }
    }

    /// Issue 29 item 10: an event the network only queued is logged as queued, never as sent; once the rules say
    /// everything queued was accepted it is delivered.
    @Test func aQueuedEventIsLoggedAsQueuedUntilTheNetworkAcceptedIt() async throws {
        let (ad, _) = makeAd(StillQueuedRules(), delivery: { _ in .queued })
        let result = try await ad.presentFullScreen(
            on: ScriptedPresenter { controls in
                await controls.renderBegan()
                _ = await controls.closeTapped()
            }, clock: ManualAdClock())
        #expect(result.log.first?.kind == .event(.impression, delivery: .queued))
        #expect(result.log.first?.description == "impression queued")
        let (delivered, _) = makeAd(FlushedRules(), delivery: { _ in .queued })
        let ok = try await delivered.presentFullScreen(
            on: ScriptedPresenter { controls in
                await controls.renderBegan()
                _ = await controls.closeTapped()
            }, clock: ManualAdClock())
        #expect(ok.log.map(\.description) == ["impression delivered", "ad_closed delivered"])
        // Rules without a queue of their own say nothing about what an adapter queued elsewhere (tracking pings).
        let (pinged, _) = makeAd(nil, delivery: { _ in .queued })
        let standard = try await pinged.presentFullScreen(
            on: ScriptedPresenter { controls in
                await controls.renderBegan()
                _ = await controls.closeTapped()
            }, clock: ManualAdClock())
        #expect(standard.log.map(\.description) == ["impression queued", "ad_closed queued"])
    }

    /// Issue 29 item 10: where nothing is sent, the log says so.
    @Test func anEventTheNetworkDoesNotTrackIsLoggedAsNotSent() async throws {
        let (ad, _) = makeAd(nil, delivery: { $0 == .closed ? .notSent : .delivered })
        let result = try await ad.presentFullScreen(
            on: ScriptedPresenter { controls in
                await controls.renderBegan()
                _ = await controls.closeTapped()
            }, clock: ManualAdClock())
        #expect(result.log.last?.kind == .event(.closed, delivery: .notSent))
        #expect(result.log.last?.description.contains("not sent") == true)
    }

    /// Issue 29 item 1: a video that fails after 3 s reports no quartile and no `video_complete`, shows the close
    /// button, and a rewarded one never asks for `completed: true`.
    @Test func aVideoThatFailsEarnsNoProgressNoCompleteAndNoCompletedRewardButCanBeClosed() async throws {
        let rules = ContractRules(
            FullScreenContract(
                creative: .video(duration: .seconds(30)), impression: .playbackStarted, close: .atEnd,
                reward: .init(minimumView: .seconds(15))))
        let clock = ManualAdClock()
        let (ad, reporter) = makeAd(rules)
        let result = try await ad.presentFullScreen(
            on: ScriptedPresenter { controls in
                await controls.renderBegan()
                await controls.playbackStarted()
                await clock.advance(to: .zero + .seconds(3))
                await controls.playbackProgressed(to: .seconds(3))
                #expect(!controls.state.closeVisible)
                await controls.playbackFailed("decoder error")
                #expect(controls.state.closeVisible)
                #expect(await controls.closeTapped())
            }, clock: clock)
        #expect(reporter.events.withLock { $0 } == [.impression, .videoStart, .closed])
        #expect(rules.claims.withLock { $0 }.isEmpty, "no claim: the minimum was not watched and the video never ended")
        #expect(result.reward == nil)
        #expect(result.log.contains { $0.kind == .playbackFailed(reason: "decoder error") })
    }

    @Test func closeIsRefusedUntilTheImagesTimeOnScreen() async throws {
        let clock = ManualAdClock()
        let (ad, reporter) = makeAd(RewardedImageRules())
        let result = try await ad.presentFullScreen(
            on: ScriptedPresenter { controls in
                await clock.advance(to: .zero + .seconds(5))
                await controls.renderBegan()
                #expect(controls.state.closeVisible == false)
                #expect(controls.state.closeAvailableAt == .zero + .seconds(20))
                #expect(await controls.closeTapped() == false)
                await clock.advance(to: .zero + .seconds(20))
                #expect(await controls.refresh().closeVisible)
                #expect(await controls.closeTapped())
            }, clock: clock)
        #expect(result.log.contains { $0.kind == .closeRefused(availableAt: .zero + .seconds(20)) })
        #expect(reporter.events.withLock { $0 }.last == .closed)
    }

    @Test func timedChangeIsAppliedWhileTheUserDoesNothing() async throws {
        let clock = ManualAdClock()
        let (ad, _) = makeAd(RewardedImageRules(grants: AdReward(name: "coins", amount: 10)))
        let result = try await ad.presentFullScreen(
            on: ScriptedPresenter { controls in
                await controls.renderBegan()
                await clock.waitForSleepers(1)
                await clock.advance(to: .zero + .seconds(15))
                // The timer has applied the change once it sleeps again, before the user does anything.
                await clock.waitForSleepers(1)
                #expect(controls.state.closeVisible)
                _ = await controls.closeTapped()
            }, clock: clock)
        #expect(result.reward == AdReward(name: "coins", amount: 10))
    }

    @Test func rewardIsGrantedOnlyWhenTheNetworkConfirmsIt() async throws {
        for grant in [AdReward(name: "coins", amount: 10), nil] {
            let clock = ManualAdClock()
            let (ad, _) = makeAd(RewardedImageRules(grants: grant))
            let result = try await ad.presentFullScreen(
                on: ScriptedPresenter { controls in
                    await controls.renderBegan()
                    await clock.advance(to: .zero + .seconds(16))
                    _ = await controls.closeTapped()
                }, clock: clock)
            #expect(result.reward == grant)
            #expect(result.log.contains { $0.kind == (grant.map { .rewardGranted($0) } ?? .rewardRefused) })
        }
    }

    @Test func presenterLeavingBeforeTheCloseButtonIsADismissalWithoutReward() async throws {
        let clock = ManualAdClock()
        let (ad, reporter) = makeAd(RewardedImageRules(grants: AdReward(name: "coins", amount: 10)))
        let result = try await ad.presentFullScreen(
            on: ScriptedPresenter { controls in
                await controls.renderBegan()
                await clock.advance(to: .zero + .seconds(5))
            }, clock: clock)
        #expect(result.reward == nil)
        #expect(result.log.contains { $0.kind == .dismissed })
        #expect(reporter.events.withLock { $0 } == [.impression, .closed])
    }

    @Test func anAdIsPresentedOnlyOnce() async throws {
        let (ad, _) = makeAd(nil)
        let leave = ScriptedPresenter { controls in _ = await controls.closeTapped() }
        _ = try await ad.presentFullScreen(on: leave, clock: ManualAdClock())
        await #expect(throws: AdError.self) { try await ad.presentFullScreen(on: leave, clock: ManualAdClock()) }
    }

    @Test func expiredOrInvalidatedAdIsNotPresented() async throws {
        let leave = ScriptedPresenter { controls in _ = await controls.closeTapped() }
        let (expired, expiredEvents) = makeAd(nil, expiresAt: .zero + .seconds(1))
        let clock = ManualAdClock(start: .zero + .seconds(1))
        let error = await #expect(throws: AdError.self) { try await expired.presentFullScreen(on: leave, clock: clock) }
        #expect(error?.code == .invalidState)
        let (invalidated, _) = makeAd(nil)
        invalidated.invalidate()
        await #expect(throws: AdError.self) { try await invalidated.presentFullScreen(on: leave, clock: clock) }
        #expect(expiredEvents.events.withLock { $0 }.isEmpty)
    }

    @Test func callsAfterThePresentationEndedAnswerAtOnce() async throws {
        let (ad, _) = makeAd(nil)
        let kept = LockedValue<FullScreenControls?>(nil)
        _ = try await ad.presentFullScreen(
            on: ScriptedPresenter { controls in
                kept.withLock { $0 = controls }
                await controls.renderBegan()
                _ = await controls.closeTapped()
            }, clock: ManualAdClock())
        let controls = try #require(kept.withLock { $0 })
        #expect(await controls.closeTapped())
        #expect(controls.state.isClosed)
    }
}

/// Rules whose final delivery had the network accept everything queued.
private struct FlushedRules: FullScreenRules {
    var showsSponsoredLabel: Bool { true }
    var contract: FullScreenContract { .standard }
    func finish() async throws(AdError) {}
}

/// Rules whose final delivery leaves events queued (a 503 or a 429).
private struct StillQueuedRules: FullScreenRules {
    var showsSponsoredLabel: Bool { true }
    var contract: FullScreenContract { .standard }
    func finish() async throws(AdError) { throw AdError(.network, "2 events still queued") }
}

/// A gate the test opens; waiting on it never blocks a thread.
final class Gate: Sendable {
    private let state = LockedValue<(open: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))
    func open() {
        let waiters = state.withLock { s in
            s.open = true
            defer { s.waiters = [] }
            return s.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
    func wait() async {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { s in
                if s.open { return true }
                s.waiters.append(c)
                return false
            }
            if ready { c.resume() }
        }
    }
}

/// A network that takes no event until the gate opens (a slow or failing events endpoint); an event reported before
/// the presenter was called is noted and not held (so the code before the ledger fails instead of hanging).
private final class GatedReporter: AdEventReporter {
    let gate: Gate
    let hold: @Sendable () -> Bool
    let delivered = LockedValue<[AdEvent]>([])
    init(gate: Gate, hold: @escaping @Sendable () -> Bool) {
        self.gate = gate
        self.hold = hold
    }
    func deliver(_ record: AdEventRecord) async throws -> AdEventDelivery {
        if hold() { await gate.wait() }
        delivered.withLock { $0.append(record.event) }
        return .delivered
    }
}

/// Holds every delivery until the gate opens, and records each event with the age the core gave it.
private final class AgeRecordingReporter: AdEventReporter {
    let gate: Gate
    let ages = LockedValue<[(AdEvent, Duration)]>([])
    init(gate: Gate) { self.gate = gate }
    func deliver(_ record: AdEventRecord) async throws -> AdEventDelivery {
        await gate.wait()
        ages.withLock { $0.append((record.event, record.age)) }
        return .queued
    }
}

@Suite("Full-screen events carry the moment of their signal", .timeLimit(.minutes(1)))
struct FullScreenEventAgeTests {
    /// Issue 29: an event's time is its renderer signal's, not the moment the network took it — a delivery held
    /// 10 s by a slow events endpoint still reports a click that happened 10 s earlier.
    @Test func anEventDeliveredLateCarriesHowLongAgoItsSignalCame() async throws {
        let clock = ManualAdClock()
        let gate = Gate()
        let reporter = AgeRecordingReporter(gate: gate)
        let ad = LoadedAd(
            networkID: "net", placement: "p", format: .interstitial, creative: AdCreative(id: "c1", kind: "image"),
            loadedAt: .zero, reporter: reporter)
        _ = try await ad.presentFullScreen(
            on: ScriptedPresenter { controls in
                await controls.renderBegan()
                await controls.tapped()
                await clock.advance(by: .seconds(10))
                _ = await controls.closeTapped()
                gate.open()
            }, clock: clock)
        let ages = reporter.ages.withLock { $0 }
        #expect(ages.map(\.0) == [.impression, .click, .closed])
        #expect(ages.first { $0.0 == .click }?.1 == .seconds(10), "the click happened 10 s before it was delivered")
        #expect(ages.first { $0.0 == .closed }?.1 == .zero, "the close happened at the end")
    }
}

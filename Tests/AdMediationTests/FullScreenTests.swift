import AdMediation
import AdMediationTesting
import Synchronization
import Testing

/// Rules with a timed event at 10 s, a close button at 15 s and a reward due at 15 s, to drive the core's
/// presentation without any adapter.
private struct TimedRules: FullScreenRules {
    var grants: AdReward?
    var startedAt = AdInstant.zero
    var progressSent = false
    var claimed = false
    var closeAvailableAt: AdInstant? { startedAt + .seconds(15) }
    var showsSponsoredLabel: Bool { true }

    mutating func start(at now: AdInstant) -> [AdEvent] {
        startedAt = now
        return [.impression, .videoStart]
    }
    mutating func advance(to now: AdInstant) -> [AdEvent] {
        guard !progressSent, now >= startedAt + .seconds(10) else { return [] }
        progressSent = true
        return [.videoProgress(percent: 50)]
    }
    mutating func click(at now: AdInstant) -> [AdEvent] { [.click] }
    mutating func close(at now: AdInstant) -> FullScreenClose {
        guard let at = closeAvailableAt, now >= at else { return .refused(availableAt: closeAvailableAt) }
        return .closed(events: [.closed], claim: nil)
    }
    mutating func dismissed(at now: AdInstant) -> [AdEvent] { [.closed] }
    mutating func rewardClaim(at now: AdInstant) -> RewardClaim? {
        guard !claimed, let at = closeAvailableAt, now >= at else { return nil }
        claimed = true
        return RewardClaim(viewed: now - startedAt, completed: true)
    }
    func nextChange(after now: AdInstant) -> AdInstant? {
        [startedAt + .seconds(10), startedAt + .seconds(15)].filter { $0 > now }.min()
    }
    func validateReward(_ claim: RewardClaim) async throws(AdError) -> AdReward? { grants }
}

/// Records what reaches the network, and hands out the rules it was given.
private final class RulesReporter: AdEventReporter {
    let rules: (any FullScreenRules)?
    let events = Mutex<[AdEvent]>([])
    init(rules: (any FullScreenRules)?) { self.rules = rules }
    func report(_ event: AdEvent, for ad: LoadedAd) async throws { events.withLock { $0.append(event) } }
    func fullScreenRules(for ad: LoadedAd) -> (any FullScreenRules)? { rules }
}

/// A presenter that runs the test's script of user actions.
private struct ScriptedPresenter: FullScreenPresenter {
    let script: @Sendable (FullScreenControls) async -> Void
    func present(_ ad: LoadedAd, controls: FullScreenControls) async { await script(controls) }
}

private func makeAd(_ rules: (any FullScreenRules)?, expiresAt: AdInstant? = nil) -> (LoadedAd, RulesReporter) {
    let reporter = RulesReporter(rules: rules)
    let ad = LoadedAd(
        networkID: "net", placement: "p", format: .rewarded, creative: AdCreative(id: "c1", kind: "video"),
        loadedAt: .zero, expiresAt: expiresAt, reporter: reporter)
    return (ad, reporter)
}

@Suite("Full-screen presentation", .timeLimit(.minutes(1)))
struct FullScreenTests {
    @Test func adWithoutRulesSendsImpressionClickAndClose() async throws {
        let (ad, reporter) = makeAd(nil)
        let result = try await ad.presentFullScreen(
            on: ScriptedPresenter { controls in
                await controls.click()
                _ = await controls.close()
            }, clock: ManualAdClock())
        #expect(reporter.events.withLock { $0 } == [.impression, .click, .closed])
        #expect(result.reward == nil)
        let failures = result.log.filter(\.isFailure)
        #expect(failures.isEmpty)
    }

    @Test func timedEventIsSentWhileTheUserDoesNothing() async throws {
        let clock = ManualAdClock()
        let (ad, reporter) = makeAd(TimedRules())
        _ = try await ad.presentFullScreen(
            on: ScriptedPresenter { controls in
                await clock.waitForSleepers(1)
                await clock.advance(to: .zero + .seconds(10))
                // The timer has applied the change once it sleeps again, before the user does anything.
                await clock.waitForSleepers(1)
                let seen = reporter.events.withLock { $0 }
                #expect(seen == [.impression, .videoStart, .videoProgress(percent: 50)])
                await clock.advance(to: .zero + .seconds(15))
                _ = await controls.close()
            }, clock: clock)
    }

    @Test func closeIsRefusedUntilTheRulesShowTheButton() async throws {
        let clock = ManualAdClock()
        let (ad, reporter) = makeAd(TimedRules())
        let result = try await ad.presentFullScreen(
            on: ScriptedPresenter { controls in
                #expect(controls.state.closeVisible == false)
                #expect(controls.state.closeAvailableAt == .zero + .seconds(15))
                #expect(await controls.close() == false)
                await clock.advance(to: .zero + .seconds(15))
                #expect(await controls.refresh().closeVisible)
                #expect(await controls.close())
            }, clock: clock)
        #expect(result.log.contains { $0.kind == .closeRefused(availableAt: .zero + .seconds(15)) })
        #expect(reporter.events.withLock { $0 }.last == .closed)
    }

    @Test func rewardIsGrantedOnlyWhenTheNetworkConfirmsIt() async throws {
        for grant in [AdReward(name: "coins", amount: 10), nil] {
            let clock = ManualAdClock()
            let (ad, _) = makeAd(TimedRules(grants: grant))
            let result = try await ad.presentFullScreen(
                on: ScriptedPresenter { controls in
                    await clock.advance(to: .zero + .seconds(16))
                    _ = await controls.close()
                }, clock: clock)
            #expect(result.reward == grant)
            #expect(result.log.contains { $0.kind == (grant.map { .rewardGranted($0) } ?? .rewardRefused) })
        }
    }

    @Test func presenterLeavingBeforeTheCloseButtonIsADismissalWithoutReward() async throws {
        let clock = ManualAdClock()
        let (ad, reporter) = makeAd(TimedRules(grants: AdReward(name: "coins", amount: 10)))
        let result = try await ad.presentFullScreen(
            on: ScriptedPresenter { _ in await clock.advance(to: .zero + .seconds(5)) }, clock: clock)
        #expect(result.reward == nil)
        #expect(result.log.contains { $0.kind == .dismissed })
        #expect(reporter.events.withLock { $0 } == [.impression, .videoStart, .closed])
    }

    @Test func anAdIsPresentedOnlyOnce() async throws {
        let (ad, _) = makeAd(nil)
        let leave = ScriptedPresenter { controls in _ = await controls.close() }
        _ = try await ad.presentFullScreen(on: leave, clock: ManualAdClock())
        await #expect(throws: AdError.self) { try await ad.presentFullScreen(on: leave, clock: ManualAdClock()) }
    }

    @Test func expiredOrInvalidatedAdIsNotPresented() async throws {
        let leave = ScriptedPresenter { controls in _ = await controls.close() }
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
        let kept = Mutex<FullScreenControls?>(nil)
        _ = try await ad.presentFullScreen(
            on: ScriptedPresenter { controls in
                kept.withLock { $0 = controls }
                _ = await controls.close()
            }, clock: ManualAdClock())
        let controls = try #require(kept.withLock { $0 })
        #expect(await controls.close())
        #expect(controls.state.isClosed)
    }
}

import AdMediation
import AdMediationTesting
import AdPresentation
import AdUIModels
import Testing

@MainActor
@Suite("App-open model", .timeLimit(.minutes(2)))
struct AppOpenAdModelTests {
    let clock = ManualAdClock()
    let network: ScriptedAdNetwork

    init() {
        network = ScriptedAdNetwork(id: "n", clock: clock, fallback: .fill(ttl: nil))
    }

    /// Launched, an ad loaded, the main content on screen.
    private func launchedModel(_ policy: AppOpenAdManager.Policy = .init()) async -> AppOpenAdModel {
        let model = AppOpenAdModel(network: network, adUnit: "unit", policy: policy, clock: clock)
        await model.launched()
        await model.manager.waitForLoad()
        await model.mainContentAppeared()
        await model.scenePhaseChanged(to: .active)
        return model
    }

    @Test func returningFromTheBackgroundShowsTheLoadedAd() async {
        let model = await launchedModel()
        #expect(!model.isShowing)
        await model.scenePhaseChanged(to: .inactive)
        await model.scenePhaseChanged(to: .background)
        await model.scenePhaseChanged(to: .inactive)
        await model.scenePhaseChanged(to: .active)
        #expect(model.isShowing)
        #expect(model.creative?.id.hasPrefix("n-unit-") == true)
        #expect(model.lastNotShown == nil)
        await model.shutdown()
    }

    @Test func anInactiveSpellWithoutTheBackgroundShowsNothing() async {
        let model = await launchedModel()
        await model.scenePhaseChanged(to: .inactive)
        await model.scenePhaseChanged(to: .active)
        #expect(!model.isShowing)
        #expect(model.creative == nil)
        let history = await model.manager.history
        #expect(!history.contains { if case .presenting = $0 { true } else { false } })
        await model.shutdown()
    }

    @Test func presentedAndDismissedReportTheEventsAndClearTheAd() async {
        let model = await launchedModel()
        await model.scenePhaseChanged(to: .background)
        await model.scenePhaseChanged(to: .active)
        #expect(model.isShowing)
        #expect(network.reportedEvents.isEmpty, "nothing is counted at the hand-over")
        await model.presented()
        await model.tapped()
        await model.dismissed()
        #expect(!model.isShowing)
        #expect(model.creative == nil)
        #expect(network.reportedEvents.map(\.event) == [.impression, .click, .closed])
        await model.shutdown()
    }

    @Test func aPolicyRefusalIsPublished() async {
        let model = await launchedModel(AppOpenAdManager.Policy(opensBeforeFirstAd: 3))
        await model.scenePhaseChanged(to: .background)
        await model.scenePhaseChanged(to: .active)
        #expect(!model.isShowing)
        #expect(model.lastNotShown == .tooFewOpens)
        await model.shutdown()
    }

    @Test func afterShutdownNothingShows() async {
        let model = await launchedModel()
        await model.shutdown()
        await model.scenePhaseChanged(to: .background)
        await model.scenePhaseChanged(to: .active)
        #expect(!model.isShowing)
        #expect(model.lastNotShown == .shutDown)
    }
}

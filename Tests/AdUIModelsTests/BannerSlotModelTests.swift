import AdMediation
import AdMediationTesting
import AdPresentation
import AdUIModels
import Observation
import Testing

@MainActor
@Suite("Banner slot model", .timeLimit(.minutes(2)))
struct BannerSlotModelTests {
    let clock = ManualAdClock()
    let network: ScriptedAdNetwork
    let model: BannerSlotModel

    init() {
        network = ScriptedAdNetwork(id: "net", clock: clock, fallback: .fill(ecpm: 1, ttl: nil))
        model = BannerSlotModel(network: network, placement: "home_banner", clock: clock)
    }

    @Test func startingShowsTheCreativeOfTheAdOnScreen() async {
        #expect(model.creative == nil)
        await model.start()
        await waitUntil("a creative to draw") { model.creative != nil }
        let onScreen = await model.controller.currentAd
        #expect(model.creative == onScreen?.creative)
        #expect(model.creative?.assetURL != nil, "the creative carries what the view draws")
        #expect(model.networkID == "net")
        await model.stop()
    }

    @Test func theImpressionCountsWhenTheViewDrewTheAd() async {
        await model.start()
        await waitUntil("a creative to draw") { model.creative != nil }
        #expect(!model.impressionCounted)
        #expect(!network.reportedEvents.contains { $0.event == .impression }, "counted before it was drawn")
        await model.drawn()
        await waitUntil("the impression is logged") { model.impressionCounted }
        #expect(network.reportedEvents.map(\.creative) == [model.creative?.id])
        #expect(network.reportedEvents.map(\.event) == [.impression])
        await model.stop()
    }

    @Test func aRefreshPublishesTheNextCreativeToItsObservers() async {
        await model.start()
        await waitUntil("a creative to draw") { model.creative != nil }
        let first = model.creative?.id
        await model.drawn()
        await waitUntil("the impression is logged") { model.impressionCounted }
        let fired = Fired()
        withObservationTracking {
            _ = model.creative
        } onChange: {
            fired.set()
        }
        await clock.advance(by: .seconds(30))
        await waitUntil("the refresh shows another ad") { model.creative != nil && model.creative?.id != first }
        #expect(fired.value)
        #expect(!model.impressionCounted, "the new ad is not drawn yet")
        await model.stop()
    }

    @Test func pausingHoldsTheRefreshAndResumingKeepsTheTimeLeft() async {
        await model.start()
        await waitUntil("a creative to draw") { model.creative != nil }
        await model.drawn()
        await waitUntil("the impression is logged") { model.impressionCounted }
        await clock.advance(by: .seconds(10))
        await model.pause(.hidden)
        await waitUntil("the slot says it is paused") { model.isPaused }
        #expect(await model.controller.nextRefresh == nil, "a paused slot has no refresh scheduled")
        await clock.advance(by: .seconds(60))
        await model.resume(.hidden)
        await waitUntil("the slot says it runs") { !model.isPaused }
        #expect(await model.controller.nextRefresh == clock.now + .seconds(20))
        await model.stop()
    }

    @Test func stoppingEmptiesTheSlotAndEndsItsWork() async {
        await model.start()
        await waitUntil("a creative to draw") { model.creative != nil }
        await model.drawn()
        await waitUntil("the impression is logged") { model.impressionCounted }
        await model.stop()
        #expect(model.creative == nil)
        #expect(clock.sleeperCount == 0, "the refresh timer still sleeps after stop")
        let loads = network.loadCount
        await clock.advance(by: .seconds(120))
        #expect(network.loadCount == loads)
        await model.start()
        #expect(model.creative == nil, "a stopped slot stays stopped")
    }
}

// Runs the iOS sample view model headless on a manual clock: a scripted network fills the banner and the
// interstitial, a console "screen" presents the interstitial, and the app goes to the background and back.
import AdMediation
import AdMediationTesting
import AdPresentation

/// The full-screen "screen": renders, then closes as soon as the close button shows (one second of ad time a step).
struct ConsolePresenter: FullScreenPresenter {
    let clock: ManualAdClock

    func present(_ ad: LoadedAd, controls: FullScreenControls) async {
        print("interstitial \(ad.creative.id) on screen")
        await controls.renderBegan()
        for second in 1...30 {
            await clock.advance(to: clock.now + .seconds(1))
            let state = await controls.refresh()
            if state.closeVisible, await controls.closeTapped() {
                print("closed after \(second) s")
                return
            }
        }
    }
}

let clock = ManualAdClock()
// One network asked alone goes through the privacy gate, as a mediator's lines do (the CMP's stored consent).
let network = PrivacyGatedNetwork(
    ScriptedAdNetwork(
        id: "scripted", clock: clock, script: ["home_banner": [.fill(ecpm: 1.0)], "level_end": [.fill(ecpm: 8.0)]]),
    configuration: PrivacyConfiguration(consentStore: UserDefaultsConsentStore()))
let model = AdSlotsViewModel(
    network: network, bannerPlacement: "home_banner", interstitialPlacement: "level_end", clock: clock,
    flush: { print("background: flushing queued events") })

await model.bannerAppeared()
await clock.advance(to: clock.now + .seconds(1))
await model.loadInterstitial()
print("interstitial: \(model.interstitial)")
await model.showInterstitial(on: ConsolePresenter(clock: clock))
print("interstitial: \(model.interstitial)")
await model.didEnterBackground()
await model.willEnterForeground()
await model.tearDown()
print("banner showed: \(model.bannerCreativeID ?? "nothing yet")")

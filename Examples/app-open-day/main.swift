// Simulates one day of an app's life on a manual clock: a cold start from a loading screen, then foregrounds and
// backgrounds through the day, with app-open ads served by the demand sandbox. Prints what was shown and why not.
import AdMediation
import AdMediationTesting
import AdPresentation
import AppOpenAds
import CurlTransport
import DemandSandbox
import Foundation

let sandbox = try await DemandSandbox.start(
    scenario: SandboxScenario(seed: 1, networks: ["appopen": NetworkScenario(fillRate: 0.7)]))
let http = CurlHTTPClient()
let clock = ManualAdClock()
// One network asked alone goes through the privacy gate, as a mediator's lines do: the CMP's stored consent is read
// on every load, and a network the rules refuse is never asked.
let privacy = PrivacyConfiguration(consentStore: UserDefaultsConsentStore())
let network = PrivacyGatedNetwork(
    AppOpenNetwork(configuration: .init(baseURL: sandbox.appOpenBaseURL), http: http, clock: clock),
    configuration: privacy)
let manager = AppOpenAdManager(
    network: network, adUnit: "ca-app-pub-sandbox/app_open_main",
    policy: .init(opensBeforeFirstAd: 1, minimumInterval: .seconds(3600)), clock: clock)

func stamp() -> String {
    let minutes = Int(clock.now.nanoseconds / 60_000_000_000)
    return String(format: "%02d:%02d", 7 + minutes / 60, minutes % 60)
}

func describe(_ result: AppOpenAdManager.ShowResult) async -> String {
    switch result {
    case .present(let ad):
        await manager.adDidPresent()
        await manager.adDidDismiss()
        return "SHOWN \(ad.creative.id) (\(ad.creative.fields["headline"] ?? "")), eCPM \(ad.ecpm ?? 0)"
    case .notShown(let reason): return "not shown: \(reason.rawValue)"
    }
}

print("\(stamp())  cold start, loading screen up")
await manager.applicationDidLaunch()
await manager.waitForLoad()
print("\(stamp())  loading screen: \(await describe(await manager.showAdIfAvailable()))")
await manager.mainContentDidAppear()

// Foregrounds through the day: (minutes after 07:00, minutes in the foreground).
let sessions = [(45, 10), (130, 5), (190, 20), (260, 5), (400, 15), (520, 10), (700, 30), (900, 5)]
for (at, length) in sessions {
    await manager.applicationDidEnterBackground()
    await clock.advance(to: .zero + .seconds(at * 60))
    let result = await manager.applicationWillEnterForeground()
    print("\(stamp())  foreground: \(await describe(result))")
    await manager.waitForLoad()
    await clock.advance(by: .seconds(length * 60))
}
print("tracking hits at the sandbox: \(sandbox.records.trackingHits.count) (one impression per ad shown)")
await http.shutdown()
await sandbox.shutdown()

// Runs a 320x50 banner slot against the demand sandbox for a few simulated minutes on a manual clock and prints
// the refresh timeline: refreshes every 30 s, a click, the app going to the background, a full-screen ad covering
// the banner, and failures backing off. The simulated clock moves only when nothing is in flight (no load, no
// impression report), so every run prints the same times.
import AdMediation
import AdMediationTesting
import AdPresentation
import ChartboostBanners
import CurlTransport
import DemandSandbox
import Foundation

let sandbox = try await DemandSandbox.start(
    scenario: SandboxScenario(seed: 3, networks: ["chartboost": NetworkScenario(fillRate: 0.9)]))
let http = CurlHTTPClient()
let clock = ManualAdClock()
// One network asked alone goes through the privacy gate, as a mediator's lines do (the CMP's stored consent).
let network = PrivacyGatedNetwork(
    ChartboostNetwork(
        configuration: .init(
            baseURL: sandbox.chartboostBaseURL, appID: "cb_app_demo", appSignature: "cb_sig_demo_secret"),
        http: http, clock: clock),
    configuration: PrivacyConfiguration(consentStore: UserDefaultsConsentStore()))
let slot = BannerRefreshController(
    network: network, request: AdRequest(placement: "Main Menu", format: .banner(.standard)), clock: clock)

func time() -> String { String(format: "t=%5.0fs", (clock.now - .zero).seconds) }
var printed = 0
@MainActor func flush() async {
    let history = await slot.history
    for event in history.dropFirst(printed) {
        switch event {
        case .shown(let id, let network): print("\(time())  shown \(id) from \(network)")
        case .loadFailed(let why): print("\(time())  load failed: \(why)")
        case .scheduled(let at): print("\(time())  next refresh at \(Int(Double(at.nanoseconds) / 1e9))s")
        case .paused(let left): print("\(time())  paused with \(left.map { "\(Int($0.seconds))s" } ?? "no timer") left")
        case .resumed: print("\(time())  resumed")
        case .clicked(let id): print("\(time())  clicked \(id)")
        case .impression(let id): print("\(time())  impression logged for \(id)")
        case .impressionFailed(let id, let why): print("\(time())  impression of \(id) failed: \(why)")
        case .unusableFill(let id, let why, let wait):
            print("\(time())  fill \(id) unusable (\(why)); next load in \(Int(wait.seconds))s at the earliest")
        }
    }
    printed = history.count
}

/// Waits until no load is in progress and every ad shown has its impression logged (or failed): the impression is
/// reported in a task of its own, over real HTTP, and is stamped with the simulated time it lands at, so moving the
/// clock while one is in flight would print a different second on each run. Bounded: 10 s of real time.
@MainActor func settle() async {
    let deadline = ContinuousClock.now + .seconds(10)
    while ContinuousClock.now < deadline {
        await slot.waitForLoad()
        await slot.drawn()  // the app drew the ad on screen: its impression (repeats for the same ad do nothing)
        var shown = 0
        var reported = 0
        for event in await slot.history {
            switch event {
            case .shown: shown += 1
            case .impression, .impressionFailed: reported += 1
            default: break
            }
        }
        if reported >= shown, !(await slot.isLoading) { return }
        try? await Task.sleep(for: .milliseconds(1))
    }
}

/// Advances the clock second by second, letting loads and impression reports finish between steps.
@MainActor func run(for seconds: Int) async {
    for _ in 0..<seconds {
        await clock.advance(by: .seconds(1))
        await settle()
        await flush()
    }
}

await slot.start()
await settle()
await flush()
await run(for: 65)
print("\(time())  -- the user clicks the banner")
await slot.adClicked()
await settle()
await flush()
await run(for: 20)
print("\(time())  -- the app goes to the background for 2 minutes")
await slot.pause(.background)
await flush()
await run(for: 120)
await slot.resume(.background)
await flush()
await run(for: 15)
print("\(time())  -- an interstitial covers the banner for 40 s")
await slot.pause(.coveredByFullScreenAd)
await flush()
await run(for: 40)
await slot.resume(.coveredByFullScreenAd)
await flush()
await run(for: 40)
print("\(time())  -- the network starts failing")
sandbox.setScenario(SandboxScenario(networks: ["chartboost": NetworkScenario(faults: [Fault(.status, status: 503)])]))
await run(for: 400)
await slot.stop()
let impressions = sandbox.records.trackingHits.filter { $0.query["e"] == "impression" }
print("impressions tracked at the sandbox: \(impressions.count)")
await http.shutdown()
await sandbox.shutdown()

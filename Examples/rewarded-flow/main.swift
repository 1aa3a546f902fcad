// A rewarded ad from GrowthCat against the demand sandbox, end to end, with core types only once the network exists:
// load, present full screen on a manual clock (the renderer's signals: render, playback progress and end; the
// impression, video quartiles from the played position, the close button held back until the minimum view time, the
// reward validated with the server), close, and the events flushed (queued, then delivered). Prints each step in
// time order: what the viewer did and what the presentation logged, merged by their instant on the simulated clock.
import AdMediation
import AdMediationTesting
import CurlTransport
import DemandSandbox
import Foundation
import GrowthCatAds
import GrowthCatSandbox

/// What the viewer did, with the instant on the simulated clock: printed with the presentation's log, in time order.
actor ViewerNotes {
    private(set) var notes: [(at: AdInstant, text: String)] = []

    func add(_ text: String, at instant: AdInstant) { notes.append((instant, text)) }
}

/// The app's screen, headless: it renders the ad and plays the video (a 30 s video when the network gives no length),
/// reporting the played position each second and the real end; the user tries to close at 10 s, then waits for the
/// close button.
struct ConsoleViewer: FullScreenPresenter {
    let clock: ManualAdClock
    let notes: ViewerNotes

    func present(_ ad: LoadedAd, controls: FullScreenControls) async {
        await notes.add(
            "showing \(ad.creative.id) (\(ad.creative.kind)), \"Sponsored\": \(controls.state.showsSponsoredLabel)",
            at: clock.now)
        await controls.renderBegan()
        var length: Duration?
        if case .video(let declared) = controls.state.creative {
            length = declared ?? .seconds(30)
            await controls.playbackStarted()
        }
        for second in 1...40 {
            await clock.advance(to: .zero + .seconds(second))
            if let video = length {
                let played = min(Duration.seconds(second), video)
                await controls.playbackProgressed(to: played, of: video)
                if played >= video {
                    await controls.playbackEnded()
                    length = nil
                }
            }
            let state = await controls.refresh()
            if second == 10, !state.closeVisible, let at = state.closeAvailableAt {
                await notes.add("the user tries to close: hidden until \(at)", at: clock.now)
            }
            if state.closeVisible, await controls.close() { return }
        }
    }
}

let sandbox = try await DemandSandbox.start()
let http = CurlHTTPClient()
let clock = ManualAdClock()
let queue = FileManager.default.temporaryDirectory.appendingPathComponent("rewarded-flow-\(UUID().uuidString).sqlite")
let client = try GrowthCatClient(
    configuration: .init(apiKey: "gc_test_demo", baseURL: sandbox.growthcatBaseURL, eventQueuePath: queue.path),
    http: http, clock: clock)
// One network asked alone goes through the privacy gate, as a mediator's lines do (the CMP's stored consent).
let network = PrivacyGatedNetwork(
    GrowthCatNetwork(client: client, clock: clock),
    configuration: PrivacyConfiguration(consentStore: UserDefaultsConsentStore()))

let request = AdRequest(placement: "rewarded_coins", format: .rewarded, userID: "user_123")
guard case .filled(let ad) = try await network.load(request) else {
    print("no fill")
    exit(0)
}
let notes = ViewerNotes()
let result = try await ad.presentFullScreen(on: ConsoleViewer(clock: clock, notes: notes), clock: clock)
// One timeline: the viewer's notes and the log, by instant; at the same instant the viewer's note comes first (it
// caused the step), and each list keeps its own order (a stable sort).
let steps =
    await notes.notes.enumerated().map { (at: $0.element.at, rank: 0, order: $0.offset, text: $0.element.text) }
    + result.log.enumerated().map { (at: $0.element.at, rank: 1, order: $0.offset, text: "\($0.element)") }
for step in steps.sorted(by: { ($0.at, $0.rank, $0.order) < ($1.at, $1.rank, $1.order) }) {
    print("t=\(step.at)  \(step.text)")
}
print("grant: \(result.reward.map { "\($0)" } ?? "nothing")")
let records = sandbox.routes(GrowthCatRoutes.self)?.records ?? GrowthCatRoutes.Records()
print("the sandbox counted \(records.events.count) events, \(records.duplicates) duplicates")
await client.shutdown()
await http.shutdown()
await sandbox.shutdown()
try? FileManager.default.removeItem(at: queue)

// A rewarded ad from GrowthCat against the demand sandbox, end to end, with core types only once the network exists:
// load, present full screen on a manual clock (the renderer's signals: render, playback progress and end; the
// impression, video quartiles from the played position, the close button held back until the minimum view time, the
// reward validated with the server), close, and the events flushed (queued, then delivered). Prints each step.
import AdMediation
import AdMediationTesting
import CurlTransport
import DemandSandbox
import Foundation
import GrowthCatAds

/// The app's screen, headless: it renders the ad and plays the video (a 30 s video when the network gives no length),
/// reporting the played position each second and the real end; the user tries to close at 10 s, then waits for the
/// close button.
struct ConsoleViewer: FullScreenPresenter {
    let clock: ManualAdClock

    func present(_ ad: LoadedAd, controls: FullScreenControls) async {
        print("showing \(ad.creative.id) (\(ad.creative.kind)), \"Sponsored\": \(controls.state.showsSponsoredLabel)")
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
                print("t=10s  the user tries to close: hidden until \(at)")
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
let network = GrowthCatNetwork(client: client, clock: clock)

let request = AdRequest(placement: "rewarded_coins", format: .rewarded, userID: "user_123")
guard case .filled(let ad) = try await network.load(request) else {
    print("no fill")
    exit(0)
}
let result = try await ad.presentFullScreen(on: ConsoleViewer(clock: clock), clock: clock)
for entry in result.log { print("t=\(entry.at)  \(entry)") }
print("grant: \(result.reward.map { "\($0)" } ?? "nothing")")
let records = sandbox.records
print("the sandbox counted \(records.growthcatEvents.count) events, \(records.growthcatDuplicates) duplicates")
await client.shutdown()
await http.shutdown()
await sandbox.shutdown()
try? FileManager.default.removeItem(at: queue)

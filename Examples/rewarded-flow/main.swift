// A rewarded ad from GrowthCat against the demand sandbox, end to end: bootstrap, load, present on a manual
// clock (impression, video quartiles, the close button held back until the minimum view time), close, validate
// the reward with the server, and flush the events. Prints each step.
import AdMediation
import CurlTransport
import DemandSandbox
import Foundation
import GrowthCatAds

let sandbox = try await DemandSandbox.start()
let http = CurlHTTPClient()
let clock = ManualAdClock()
let queue = FileManager.default.temporaryDirectory.appendingPathComponent("rewarded-flow-\(UUID().uuidString).sqlite")
    .path
let client = try GrowthCatClient(
    configuration: .init(apiKey: "gc_test_demo", baseURL: sandbox.growthcatBaseURL, eventQueuePath: queue), http: http,
    clock: clock)

let bootstrap = try await client.refreshSDKConfig()
print(
    "bootstrap: ads enabled \(bootstrap.adsConfig.adsEnabled), formats "
        + "\(bootstrap.adsConfig.formats.map(\.rawValue).sorted()), queue cap \(bootstrap.adsConfig.maxOfflineAdEvents)"
)
let session = client.makeSessionID()
guard let ad = try await client.loadAd(placementKey: "rewarded_coins", appUserID: "user_123", sessionID: session) else {
    print("no fill")
    exit(0)
}
print(
    "loaded \(ad.creativeID): \(ad.creativeType), \(Int(ad.durationSeconds ?? 0)) s, reward \(ad.placement?.rewardAmount ?? 0) \(ad.placement?.rewardName ?? "") after \(Int(ad.placement?.minimumViewSeconds ?? 0)) s"
)

func send(_ events: [GrowthCatPresentation.Event]) async throws {
    for event in events {
        try await client.trackAdEvent(
            event.name, for: ad, placementKey: "rewarded_coins", appUserID: "user_123", sessionID: session,
            metadata: event.metadata)
        let pct = event.metadata["progress_pct"].map { " \($0)%" } ?? ""
        print(String(format: "t=%4.1fs  %@%@", Double(clock.now.nanoseconds) / 1e9, event.name.rawValue, pct))
    }
}

var (presentation, first) = GrowthCatPresentation.present(ad, at: clock.now)
print("\"Sponsored\" label shown: \(presentation.showsSponsoredLabel)")
try await send(first)
/// Validates the reward with the server; grants only what it confirms.
func validate(_ figures: (viewedSeconds: Double, completed: Bool)) async throws {
    let answer = try await client.validateAdReward(
        for: ad, appUserID: "user_123", sessionID: session,
        viewedSeconds: figures.viewedSeconds, completed: figures.completed)
    let at = String(format: "t=%4.1fs", Double(clock.now.nanoseconds) / 1e9)
    print(
        answer.rewardValidated
            ? "\(at)  reward validated: grant \(answer.reward?.amount ?? 0) \(answer.reward?.name ?? "")"
            : "\(at)  reward refused: grant nothing")
}

for second in 1...20 {
    await clock.advance(to: .zero + .seconds(second))
    try await send(presentation.advance(to: clock.now))
    // The reward is validated as soon as the minimum view time is reached, as the seed orders it.
    if let figures = presentation.rewardValidation(at: clock.now) { try await validate(figures) }
    if second == 10, case (.notYet(let at), _) = presentation.close(at: clock.now) {
        print("t=10.0s  the user tries to close: hidden until \(Double(at?.nanoseconds ?? 0) / 1e9) s")
    }
}
if case (.closed(let figures), let events) = presentation.close(at: clock.now) {
    try await send(events)
    if let figures { try await validate(figures) }
}
let report = await client.flushAdEvents()
print(
    "flushed \(report.sent) events; the sandbox counted \(sandbox.records.growthcatEvents.count) distinct events, "
        + "\(sandbox.records.growthcatDuplicates) duplicates"
)
await http.shutdown()
await sandbox.shutdown()
try? FileManager.default.removeItem(atPath: queue)
